package latency

import (
	"runtime"
	"testing"
	"time"
)

// MachineBusy grows while this process spins on a core.
func TestMachineBusy(t *testing.T) {
	b0, ok := MachineBusy()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("MachineBusy found no /proc/stat on Linux")
		}
		t.Skip("no /proc/stat")
	}
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
	}
	b1, _ := MachineBusy()
	if d := b1 - b0; d < 100*time.Millisecond {
		t.Errorf("the machine was busy %v while this process spun for 200ms", d)
	}
}
