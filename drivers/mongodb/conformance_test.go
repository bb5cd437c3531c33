package mongodb_test

import (
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
)

// TestConformance runs the suite on clients opened by DSN, each with a
// mongo.Client of its own.
func TestConformance(t *testing.T) {
	uri := server(t)
	dsn := dsnFor(t, uri)
	dsn = drivertest.WithParams(dsn, "distlock_create_collection", "false")
	conformance.Run(t, conformance.Harness{
		NewClient:       drivertest.NewClient("mongodb", dsn),
		NewDialerClient: drivertest.NewDialerClient("mongodb", dsn),
		NewConn:         func(t *testing.T) driver.Conn { return drivertest.Connect(t, mongodb.Driver{}, dsn) },
		NewScratchConn: func(t *testing.T, name string) driver.Conn {
			return drivertest.Connect(t, mongodb.Driver{}, drivertest.WithParams(uri, "distlock_database", testDB, "distlock_collection", name))
		},
		Fencing: true,
		Extend:  true,
		TTL:     ttl,
		// A wrong password, on the FerretDB with passwords.
		Misconfigured: wrongPasswordClient,
	})
}

// TestConformance_sharedClient runs the suite on clients that share one
// mongo.Client given to mongodb.New.
func TestConformance_sharedClient(t *testing.T) {
	uri := server(t)
	connector, err := mongodb.New(adminClient(t, uri), mongodb.Config{Database: testDB, Collection: freshCollection(t, uri)})
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client { return lock.OpenConnector(connector) },
		NewConn: func(t *testing.T) driver.Conn {
			c, err := connector.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Fencing: true,
		Extend:  true,
		TTL:     ttl,
	})
}
