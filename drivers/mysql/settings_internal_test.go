package mysql

import (
	"slices"
	"testing"
)

// Each rule fires on the setting that breaks it, and not on a safe one
// (the test server is unsafe on purpose, and cannot show the safe side).
func TestServerSettings_judge(t *testing.T) {
	for _, c := range []struct {
		name string
		s    serverSettings
		want []string
	}{
		{"safe", serverSettings{flushLog: 1, logBin: true, syncBinlog: 1}, nil},
		{"safe without a binary log", serverSettings{flushLog: 1, syncBinlog: 0}, nil},
		{"log flushed once a second", serverSettings{flushLog: 2, logBin: true, syncBinlog: 1}, []string{"mysql-flush-log"}},
		{"log never flushed", serverSettings{flushLog: 0}, []string{"mysql-flush-log"}},
		{"binary log not synced", serverSettings{flushLog: 1, logBin: true, syncBinlog: 0}, []string{"mysql-sync-binlog"}},
	} {
		var got []string
		for _, f := range c.s.judge() {
			got = append(got, f.Rule)
			if f.Problem == "" || f.Fix == "" {
				t.Errorf("%s: %v says not what goes wrong or what to change", c.name, f)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: rules %q, want %q", c.name, got, c.want)
		}
	}
}
