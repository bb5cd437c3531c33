package postgres

import (
	"context"
	"fmt"

	"github.com/distlock/lock/driver"
)

var _ driver.SettingsChecker = (*conn)(nil)

// settingsQuery reads, in one round trip on one of the pool's sessions,
// what the settings check judges: durability of a commit, and the
// standbys that stream from this server and how. A role without
// pg_read_all_stats sees the standbys but not how they replicate
// (sync_state is NULL). A walsender on a logical slot (a subscription, a
// change-data-capture tool) is no standby a failover could go to: every
// role sees its slot's active_pid in pg_replication_slots.
const settingsQuery = `WITH standbys AS (
	SELECT r.sync_state FROM pg_stat_replication r
	WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.active_pid = r.pid AND s.slot_type = 'logical'))
SELECT current_setting('synchronous_commit'), current_setting('fsync'),
	(SELECT count(*) FROM standbys WHERE sync_state IN ('async', 'potential')),
	(SELECT count(*) FROM standbys WHERE sync_state IS NULL)`

// CheckSettings judges the server's durability settings, as a session of
// the pool sees them, and its standbys. See DESIGN.md ("The settings
// check").
func (c *conn) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err != nil {
		return nil, c.fail(&cl, err)
	}
	var s serverSettings
	if err := cl.pc.QueryRow(cl.ctx, settingsQuery).Scan(&s.syncCommit, &s.fsync, &s.async, &s.unknown); err != nil {
		return nil, c.fail(&cl, err)
	}
	return s.judge(), nil
}

// serverSettings is what the settings check reads.
type serverSettings struct {
	syncCommit, fsync string
	async, unknown    int64 // standbys that replicate asynchronously, and those whose mode this role cannot see
}

func (s serverSettings) judge() []driver.Finding {
	var fs []driver.Finding
	add := func(rule, problem, fix string) {
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: rule, Problem: problem, Fix: fix})
	}
	if s.fsync != "on" {
		add("postgres-fsync",
			"fsync off: a crash of the machine can lose the latest grants, or corrupt the lock table; a lost grant's token is then granted again",
			"set fsync = on")
	}
	if s.syncCommit == "off" {
		add("postgres-synchronous-commit",
			"synchronous_commit off: a crash of the server forgets the latest commits, grants that holders were told of among them, and their tokens are granted again",
			"set synchronous_commit = on for the lock's role or database (ALTER ROLE ... SET synchronous_commit = on)")
	}
	if s.async > 0 {
		add("postgres-async-standby",
			fmt.Sprintf("%d standbys replicate asynchronously: a failover to one of them loses the latest grants (two holders at once) and their tokens", s.async),
			"make the standbys you fail over to synchronous (synchronous_standby_names, synchronous_commit = remote_apply), or wait a TTL after a failover before granting")
	}
	if s.unknown > 0 {
		add("postgres-standbys-unreadable",
			fmt.Sprintf("%d standbys stream from this server, and this role cannot see whether they replicate synchronously", s.unknown),
			"run the check as a role with pg_read_all_stats, or make sure the standbys you fail over to are synchronous")
	}
	return fs
}
