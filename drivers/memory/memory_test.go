package memory_test

import (
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

func TestConformance(t *testing.T) {
	store := memory.New()
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client { return lock.OpenConnector(store) },
		NewConn: func(t *testing.T) driver.Conn {
			c, err := store.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
	})
}

func TestConformance_byDSN(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			c, err := lock.Open("memory", t.Name())
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
	})
}
