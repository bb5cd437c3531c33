package mysql

import (
	"slices"
	"testing"

	"github.com/distlock/lock/drivertest"
)

// Each rule fires on the setting that breaks it, and not on a safe one.
// TestCheckSettings_binaryLog shows both sides on a real server.
func TestServerSettings_judge(t *testing.T) {
	for _, c := range []struct {
		name string
		s    serverSettings
		want []string
	}{
		{"safe", serverSettings{flushLog: 1, logBin: true, syncBinlog: 1}, nil},
		{"safe without a binary log", serverSettings{flushLog: 1, syncBinlog: 0}, nil},
		{"log flushed once a second", serverSettings{flushLog: 2, logBin: true, syncBinlog: 1}, []string{"warning mysql-flush-log"}},
		{"log never flushed", serverSettings{flushLog: 0}, []string{"warning mysql-flush-log"}},
		{"binary log not synced", serverSettings{flushLog: 1, logBin: true, syncBinlog: 0}, []string{"warning mysql-sync-binlog"}},
	} {
		got := drivertest.Findings(t, c.s.judge())
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}
