package mysql

import (
	"context"

	"github.com/distlock/lock/driver"
)

var _ driver.SettingsChecker = (*conn)(nil)

// CheckSettings judges the server's durability settings. See DESIGN.md
// ("The settings check").
func (c *conn) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	ctx, done := c.request(ctx)
	defer done()
	var s serverSettings
	err := c.db.QueryRowContext(ctx, "SELECT @@innodb_flush_log_at_trx_commit, @@log_bin, @@sync_binlog").
		Scan(&s.flushLog, &s.logBin, &s.syncBinlog)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	return s.judge(), nil
}

// serverSettings is what the settings check reads.
type serverSettings struct {
	flushLog   int  // innodb_flush_log_at_trx_commit: 1 writes and flushes the log at each commit
	logBin     bool // the binary log is on
	syncBinlog int  // sync_binlog: 1 flushes the binary log at each commit
}

func (s serverSettings) judge() []driver.Finding {
	var fs []driver.Finding
	add := func(rule, problem, fix string) {
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: rule, Problem: problem, Fix: fix})
	}
	if s.flushLog != 1 {
		add("mysql-flush-log",
			"innodb_flush_log_at_trx_commit is not 1: a crash forgets up to a second of commits, grants that holders were told of among them, and their tokens are granted again",
			"set innodb_flush_log_at_trx_commit = 1")
	}
	if s.logBin && s.syncBinlog != 1 {
		add("mysql-sync-binlog",
			"sync_binlog is not 1: a crash can lose commits from the binary log that InnoDB kept, and a replica built from it then lacks grants (two holders after a failover to it)",
			"set sync_binlog = 1")
	}
	return fs
}
