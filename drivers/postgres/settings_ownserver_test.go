//go:build servers

package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// TestCheckSettings_ownServer holds the rules the shared test server
// cannot show against a primary of the test's own, with fsync on, and
// standbys streaming from it. The subtests run in order on the one
// primary: without a standby, with a logical receiver, with an
// asynchronous standby, with that standby made synchronous, and with a
// second standby as its potential replacement. Each checks as the
// superuser, as a role with pg_monitor, which sees how standbys
// replicate, and as a role without it, which does not.
func TestCheckSettings_ownServer(t *testing.T) {
	drivertest.OwnServers(t)
	primary := startPrimary(t)
	primary.exec(t,
		"CREATE ROLE distlock_monitor LOGIN IN ROLE pg_monitor",
		"CREATE ROLE distlock_plain LOGIN",
		// The roles' clients create the lease table in the database postgres.
		"GRANT CREATE ON SCHEMA public TO distlock_monitor, distlock_plain")
	roles := []struct{ name, dsn string }{
		{"superuser", primary.dsn},
		{"pg_monitor", primary.dsnAs("distlock_monitor")},
		{"plain", primary.dsnAs("distlock_plain")},
	}
	// check checks as each role: the plain one gets plain's findings, the
	// others those of privileged.
	check := func(t *testing.T, privileged, plain []string) {
		t.Helper()
		for _, r := range roles {
			fs, err := open(t, r.dsn).CheckSettings(ctxFor(t, 10*time.Second))
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			want := privileged
			if r.name == "plain" {
				want = plain
			}
			if got := drivertest.Findings(t, fs); !slices.Equal(got, want) {
				t.Errorf("%s: findings %q, want %q", r.name, got, want)
			}
		}
	}
	async := []string{"warning postgres-async-standby"}
	unreadable := []string{"warning postgres-standbys-unreadable"}

	t.Run("fsync on, no standby", func(t *testing.T) { check(t, nil, nil) })
	// A logical walsender (change data capture, a subscription) is no
	// standby that a failover could go to.
	t.Run("logical replication", func(t *testing.T) {
		primary.startLogicalReceiver(t, "distlock_cdc")
		check(t, nil, nil)
	})
	if t.Failed() {
		return
	}

	const standby = "distlock_standby"
	primary.startStandby(t, standby)
	t.Run("asynchronous standby", func(t *testing.T) { check(t, async, unreadable) })

	primary.exec(t,
		"ALTER SYSTEM SET synchronous_standby_names = '"+standby+"'",
		"SELECT pg_reload_conf()")
	primary.waitReplication(t, standby, "streaming", "sync")
	t.Run("synchronous standby", func(t *testing.T) { check(t, nil, unreadable) })

	// A second standby, named after the first, waits as its potential
	// replacement: it may lag, so a failover to it can lose grants.
	const second = "distlock_standby2"
	primary.startStandby(t, second)
	primary.exec(t,
		"ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 ("+standby+", "+second+")'",
		"SELECT pg_reload_conf()")
	primary.waitReplication(t, second, "streaming", "potential")
	primary.waitReplication(t, standby, "streaming", "sync")
	t.Run("potential standby", func(t *testing.T) { check(t, async, unreadable) })
}
