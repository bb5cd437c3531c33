package redistest

import (
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/testenv"
)

// ListScratch checks the ListScratch of the Redlock driver d on the Redis
// servers with drivertest.ListScratch: the key prefixes under a prefix
// with SCAN's '?' in it, found on every node.
func ListScratch(t *testing.T, d driver.Driver) { listScratch(t, d, Servers(t), testQuery) }

// listScratch is ListScratch on the servers at addrs, with query.
func listScratch(t *testing.T, d driver.Driver, addrs []string, query string) {
	drivertest.ListScratch(t, drivertest.ScratchKeyPrefix, func(t testing.TB, ns string) driver.Conn {
		c := testenv.Connect(t, d, DSN(addrs, withPrefix(query, ns)))
		t.Cleanup(func() { c.Close() })
		return c
	})
}
