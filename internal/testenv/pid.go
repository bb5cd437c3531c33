package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ServerPID returns the PID recorded in dir's file pidfile if that process
// is alive (not a zombie) and runs in dir (its cwd): a server that
// scripts/services.sh started there, and so one a fault test may signal.
// Nothing else is ever ours to signal.
func ServerPID(dir, pidfile string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, pidfile))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	proc := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return 0, false
	}
	if s := string(stat); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
		return 0, false
	}
	if cwd, err := os.Readlink(proc + "/cwd"); err != nil || cwd != dir {
		return 0, false
	}
	return pid, true
}
