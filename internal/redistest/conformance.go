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

// Processes runs conformance.RunProcesses on the Redlock driver registered
// as name (d is that driver), on five nodes with fencing tokens: four
// worker processes contend while the nemesis hangs minorities and
// majorities, kills minorities (restarted after a TTL, empty), and pauses
// holders past their TTL. It requires no overlap, no token regression, no
// lost write; and that the same run on a deliberately unsafe variant (a
// backend lease a twentieth of the TTL the client believes) is caught.
func Processes(t *testing.T, name string, d driver.Driver, run time.Duration) {
	addrs := Servers(t)
	dsn := DSN(addrs, testQuery+"&fencing=true&key_prefix=procs:")
	open := func(unsafe bool) func(testing.TB) *lock.Client {
		return func(t testing.TB) *lock.Client {
			cn, err := d.OpenConnector(dsn)
			if err != nil {
				t.Fatal(err)
			}
			if unsafe {
				cn = conformance.ShortLease(cn, 20)
			}
			return lock.OpenConnector(cn)
		}
	}
	t.Run("safe", func(t *testing.T) {
		rep := conformance.RunProcesses(t, conformance.Processes{
			Open: open(false), Duration: run, TTL: time.Second, Fenced: true,
			Faults: NewFaults(t, 5), Majority: true, PauseHolders: true,
		})
		t.Log(rep)
		conformance.RequireSafe(t, rep)
	})
	t.Run("unsafe", func(t *testing.T) {
		rep := conformance.RunProcesses(t, conformance.Processes{
			Open: open(true), Duration: run, TTL: time.Second, Fenced: true,
			PauseHolders: true, // every action pauses a holder: the unsafe lease shows
		})
		t.Log(rep)
		conformance.RequireCaught(t, rep)
	})
}
