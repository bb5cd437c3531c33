package valkey

import (
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

func TestSecrets_neverPrinted(t *testing.T) {
	secrettest.RedisDriver(t, "valkey", redistest.Servers(t), func(urls []string) (driver.Connector, error) {
		clients, err := library.Clients(urls)
		for _, c := range clients {
			t.Cleanup(c.Close)
		}
		if err != nil {
			t.Fatal(secrettest.Elide(err.Error()))
		}
		return New(clients, redlock.WithFencing(true))
	})
}
