package mysql_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// The test server flushes its log once a second and keeps no binary log,
// for speed: the check warns of the first and of nothing else.
func TestCheckSettings(t *testing.T) {
	fs, err := open(t, withTable(t, server(t))).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := drivertest.Findings(t, fs)
	if want := []string{"warning mysql-flush-log"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// A MariaDB of the test's own keeps a binary log and flushes InnoDB's log
// at each commit. With sync_binlog=0 the check warns of the binary log
// alone; once sync_binlog is 1 it finds nothing, the safe side of both
// rules.
func TestCheckSettings_binaryLog(t *testing.T) {
	drivertest.OwnServers(t)
	dsn := startOwnServer(t, "--log-bin=mariadb-bin", "--innodb-flush-log-at-trx-commit=1", "--sync-binlog=0")
	c := open(t, withTable(t, dsn))
	check := func(t *testing.T, want []string) {
		t.Helper()
		fs, err := c.CheckSettings(drivertest.Context(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got := drivertest.Findings(t, fs); !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	}
	t.Run("sync_binlog=0", func(t *testing.T) {
		check(t, []string{"warning mysql-sync-binlog"})
	})
	t.Run("sync_binlog=1", func(t *testing.T) {
		if _, err := admin(t, dsn).ExecContext(drivertest.Context(t, 10*time.Second), "SET GLOBAL sync_binlog = 1"); err != nil {
			t.Fatal(err)
		}
		check(t, nil)
	})
}
