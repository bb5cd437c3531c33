package locktest_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

const ms = time.Millisecond

// open returns a client on c that logs nothing, closed when t ends.
func open(t testing.TB, c driver.Connector) *lock.Client {
	t.Helper()
	cl := lock.OpenConnector(c)
	cl.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() { cl.Close() })
	return cl
}

// ended reports whether ch is closed.
func ended(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
