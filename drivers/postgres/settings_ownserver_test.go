//go:build servers

package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// TestCheckSettings_ownServer holds the rules the shared test server
// cannot show against a primary of the test's own, with fsync on, and a
// standby streaming from it. The subtests run in order on the one
// primary: without a standby, with a logical receiver, with an asynchronous one (as the
// superuser, a role with pg_monitor and a role without it) and with it
// made synchronous.
func TestCheckSettings_ownServer(t *testing.T) {
	primary := startPrimary(t)
	check := func(t *testing.T, dsn string, want ...string) {
		t.Helper()
		fs, err := open(t, dsn).CheckSettings(ctxFor(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got := drivertest.Findings(t, fs); !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	}
	// The roles may create the lease table in the database postgres.
	primary.exec(t,
		"CREATE ROLE distlock_plain LOGIN",
		"CREATE ROLE distlock_monitor LOGIN IN ROLE pg_monitor",
		"GRANT CREATE ON SCHEMA public TO distlock_plain, distlock_monitor")
	plain := primary.dsnAs("distlock_plain")
	monitor := primary.dsnAs("distlock_monitor")

	t.Run("fsync on, no standby", func(t *testing.T) {
		check(t, primary.dsn)
		check(t, plain)
	})
	if t.Failed() {
		return
	}
	// A logical walsender (change data capture, a subscription) is no
	// standby that a failover could go to.
	t.Run("logical replication", func(t *testing.T) {
		primary.startLogicalReceiver(t, "distlock_cdc")
		check(t, primary.dsn)
		check(t, plain)
	})
	const standby = "distlock_standby"
	primary.startStandby(t, standby)
	t.Run("asynchronous standby", func(t *testing.T) {
		check(t, primary.dsn, "warning postgres-async-standby")
	})
	t.Run("role with pg_monitor", func(t *testing.T) {
		check(t, monitor, "warning postgres-async-standby")
	})
	t.Run("role without pg_read_all_stats", func(t *testing.T) {
		check(t, plain, "warning postgres-standbys-unreadable")
	})
	primary.exec(t,
		"ALTER SYSTEM SET synchronous_standby_names = '"+standby+"'",
		"SELECT pg_reload_conf()")
	primary.waitReplication(t, standby, "streaming", "sync")
	t.Run("synchronous standby", func(t *testing.T) {
		check(t, primary.dsn)
		check(t, monitor)
		check(t, plain, "warning postgres-standbys-unreadable")
	})
}
