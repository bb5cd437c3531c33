package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	"github.com/distlock/lock"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
)

// A lock on a MariaDB or MySQL database, through a pool the program
// already has. The example compiles only: it needs a server.
func ExampleNew() {
	db, err := sql.Open("mysql", "app:secret@tcp(db.example.com:3306)/app")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	connector, err := mysqldriver.New(db, mysqldriver.Config{Table: "app_locks"})
	if err != nil {
		log.Fatal(err)
	}
	c := lock.OpenConnector(connector)
	defer c.Close()
	ctx := context.Background()
	l, err := c.Acquire(ctx, "invoice:42")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	tok, _ := l.Token()
	fmt.Println("holding invoice:42 with token", tok)
}
