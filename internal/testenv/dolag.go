package testenv

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// DoLagRunsEnv names the variable that repeats DoCancelledAtValidUntil,
// for a measurement: its value is the number of runs (1 by default).
const DoLagRunsEnv = "DISTLOCK_DO_LAG_RUNS"

// DoCancelledAtValidUntil runs Do with a TTL of 1s on a client from open,
// whose brk breaks the backend (a stalled or silent server) once the
// function runs, and fails t unless the function's context is cancelled
// within 25ms of the lock's ValidUntil, with Do's error matching
// lock.ErrLost. It closes each client it opens.
func DoCancelledAtValidUntil(t *testing.T, open func(t *testing.T) (c *lock.Client, brk func())) {
	t.Helper()
	runs := 1
	if n, err := strconv.Atoi(os.Getenv(DoLagRunsEnv)); err == nil {
		runs = n
	}
	var worst time.Duration
	for range runs {
		c, brk := open(t)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		var lag time.Duration
		err := c.Do(ctx, "do", func(ctx context.Context) error {
			brk()
			<-ctx.Done()
			lag = time.Since(lock.FromContext(ctx).ValidUntil())
			return nil
		}, lock.WithTTL(time.Second))
		cancel()
		if !errors.Is(err, lock.ErrLost) {
			t.Errorf("Do = %v, want ErrLost", err)
		}
		c.Close()
		worst = max(worst, lag)
	}
	t.Logf("fn's context cancelled at most %v after ValidUntil over %d runs", worst, runs)
	if worst > 25*time.Millisecond {
		t.Errorf("fn's context cancelled %v after ValidUntil; want at most 25ms", worst)
	}
}
