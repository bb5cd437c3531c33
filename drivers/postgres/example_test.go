package postgres_test

import (
	"context"
	"log"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Open a client by DSN, and run a function under a lock whose fencing token
// goes with every write to the protected resource.
func Example() {
	c, err := lock.Open("postgres", "postgres://app@db.example.com/app?distlock_table=app_locks")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	err = c.Do(ctx, "invoice:42", func(ctx context.Context) error {
		token, _ := lock.FromContext(ctx).Token()
		log.Printf("holding invoice:42 with token %v", token)
		return nil
	}, lock.WithTTL(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
}

// Share a pool the program already has, with a table it manages itself.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.example.com/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	connector, err := postgres.New(pool, postgres.Config{Table: "locking.leases", NoCreate: true})
	if err != nil {
		log.Fatal(err)
	}
	c := lock.OpenConnector(connector)
	defer c.Close()
	l, err := c.Acquire(ctx, "nightly-report")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	// ...
}
