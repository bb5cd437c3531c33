package latency

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// MachineBusy returns how much CPU time the whole machine has spent
// busy (all cores, any process: user, nice, system, irq and softirq time)
// since it booted, read from /proc/stat, and false where that file cannot
// be read (not Linux). Idle and I/O wait are not busy; nor is steal (the
// hypervisor ran another machine), and guest time is counted in user time
// already. Its resolution is the kernel's clock tick, 10ms.
// Beside CPUTime it tells a client that stalled (little CPU spent
// anywhere) from one that other processes crowded out.
func MachineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 6 || string(f[0]) != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, false
		}
		switch i {
		case 0, 1, 2, 5, 6: // user nice system idle iowait irq softirq steal guest guest_nice
			busy += n
		}
	}
	return time.Duration(busy) * (time.Second / 100), true // USER_HZ is 100 on Linux
}
