// Package leakcheck fails a test binary that leaves goroutines of this
// module running after its tests: a keeper of Client.Do that outlived its
// call, a watch that was never closed, a cleanup that never ended.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// module is the prefix of the functions whose goroutines must not outlive
// the tests.
const module = "github.com/distlock/lock"

// Main runs the tests and then fails the binary if goroutines running this
// module's code are still alive after a grace period. Use it as
//
//	func TestMain(m *testing.M) { leakcheck.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := Wait(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "leakcheck: goroutines still running after the tests:\n\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// Wait waits up to grace for this module's goroutines (other than the
// caller's) to end, and returns the stacks of those that did not, or "".
func Wait(grace time.Duration) string {
	deadline := time.Now().Add(grace)
	for {
		leaked := find()
		if leaked == "" || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// find returns the stacks of the goroutines that run this module's code,
// leaving out the calling goroutine and the test framework's own.
func find() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var leaked []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 { // the calling goroutine comes first
			continue
		}
		ours := strings.Contains(g, module+".") || strings.Contains(g, module+"/")
		if ours && !strings.Contains(g, "testing.(*M)") {
			leaked = append(leaked, g)
		}
	}
	return strings.Join(leaked, "\n\n")
}
