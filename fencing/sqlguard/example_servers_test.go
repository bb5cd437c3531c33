//go:build servers

package sqlguard_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log"

	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/sqlguard"
)

// A newer holder's token is admitted, and then the older holder's is
// refused. The example runs with -tags servers, on the MariaDB test server
// of scripts/services.sh, found through DISTLOCK_MYSQL_DSN.
func Example_testServers() {
	ctx := context.Background()
	db, err := sql.Open("mysql", drivertest.ExampleServer("DISTLOCK_MYSQL_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	table := "distlock_example_fences_" + hex.EncodeToString(suffix)
	defer db.Exec("DROP TABLE IF EXISTS " + table)
	g, err := sqlguard.New(ctx, db, sqlguard.Config{Dialect: sqlguard.MySQL, Table: table})
	if err != nil {
		log.Fatal(err)
	}
	for _, token := range []fencing.Token{8, 7} {
		err := g.Do(ctx, "invoice/42", token, func(ctx context.Context) error {
			return nil // the protected write, in sqlguard.Tx(ctx)
		})
		fmt.Printf("token %d: admitted %v, stale %v\n", token, err == nil, errors.Is(err, fencing.ErrStale))
	}
	// Output:
	// token 8: admitted true, stale false
	// token 7: admitted false, stale true
}
