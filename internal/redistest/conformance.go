package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/testenv"
)

// Main runs a package's tests holding the Redis servers exclusively (see
// Exclusive), then checks with goleak that no goroutine was left behind,
// and exits. Use it as TestMain; testenv.Main takes other locks as well.
func Main(m *testing.M) { testenv.Main(m, testenv.Redis) }

// testQuery makes the per-node timeout roomier than the default: the tests
// share two cores with the race detector and other packages' tests.
const testQuery = "node_timeout=250ms"

// Conformance runs the conformance suite on the Redlock driver registered
// as name (d is that driver), with one node, with five (and the fault
// cases), and with five and fencing tokens.
func Conformance(t *testing.T, name string, d driver.Driver) {
	addrs := Servers(t)
	t.Run("N=1", func(t *testing.T) {
		conformance.Run(t, harness(name, d, addrs[:1], testQuery, nil))
	})
	t.Run("N=5", func(t *testing.T) {
		conformance.Run(t, harness(name, d, addrs, testQuery, NewFaults(t, 5)))
	})
	t.Run("N=5/fencing", func(t *testing.T) {
		conformance.Run(t, harness(name, d, addrs, testQuery+"&fencing=true&key_prefix=fenced:", nil))
	})
}

func harness(name string, d driver.Driver, addrs []string, query string, faults conformance.Faults) conformance.Harness {
	dsn := DSN(addrs, query)
	return conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			c, err := lock.Open(name, dsn)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		NewConn: func(t *testing.T) driver.Conn { return testenv.Connect(t, d, dsn) },
		Fencing: strings.Contains(query, "fencing=true"),
		Extend:  true,
		Wakeups: true,
		TTL:     time.Second,
		Faults:  faults,
	}
}
