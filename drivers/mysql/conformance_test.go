package mysql_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
	"github.com/distlock/lock/drivertest"
)

// conformanceTTL is the suite's short lease: long enough for extensions to
// keep a lease alive on a shared, loaded two-core machine.
const conformanceTTL = time.Second

// TestConformance runs the suite on clients opened by DSN, each with a
// pool of its own.
func TestConformance(t *testing.T) {
	full := withTable(t, server(t))
	conformance.Run(t, conformance.Harness{
		NewClient:       func(t *testing.T) *lock.Client { return drivertest.OpenPinged(t, "mysql", full) },
		NewDialerClient: drivertest.NewDialerClient("mysql", full),
		NewConn:         func(t *testing.T) driver.Conn { return drivertest.Connect(t, mysqldriver.Driver{}, full) },
		NewScratchConn: func(t *testing.T, name string) driver.Conn {
			return drivertest.Connect(t, mysqldriver.Driver{}, drivertest.WithParams(server(t), "distlock_table", name))
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     conformanceTTL,
		Misconfigured: func(t *testing.T) *lock.Client {
			return drivertest.Open(t, "mysql", drivertest.WithParams(wrongPassword(t), "distlock_table", freshTable(t, server(t))))
		},
	})
}

// TestConformance_sharedPool runs the suite on clients that share one
// pool given to mysql.New.
func TestConformance_sharedPool(t *testing.T) {
	dsn := server(t)
	db := admin(t, dsn)
	db.SetMaxIdleConns(16)
	connector, err := mysqldriver.New(db, mysqldriver.Config{Table: freshTable(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			c := lock.OpenConnector(connector)
			if err := c.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			return c
		},
		NewConn: func(t *testing.T) driver.Conn {
			c, err := connector.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     conformanceTTL,
	})
}
