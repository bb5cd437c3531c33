package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// MeasureEnv names the variable that turns on the measurements of
// MeasureHung: its value is how long each contention runs, such as 30s.
const MeasureEnv = "DISTLOCK_MEASURE_HUNG"

// MeasureHung measures, for the Redlock driver registered as name on five
// nodes with default settings, fencing off and on: handoffs on one key
// (four goroutines of one client and four clients, TTL 2s) with 0, 1 and 2
// nodes hung, and the lag of Do's cancellation behind ValidUntil with 3 of
// 5 hung, over 20 runs. It fails t on a lock returned past its validity.
// It is a measurement for humans, not a test: it runs only when
// MeasureEnv is set.
func MeasureHung(t *testing.T, name string) {
	run, err := time.ParseDuration(os.Getenv(MeasureEnv))
	if err != nil {
		t.Skipf("a measurement: set %s to a duration (such as 30s) to run it", MeasureEnv)
	}
	addrs := Servers(t)
	for _, fencing := range []bool{false, true} {
		query := fmt.Sprintf("fencing=%t&key_prefix=measure-hung:", fencing)
		open := func(t *testing.T) *lock.Client {
			c, err := lock.Open(name, DSN(addrs, query))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			if err := c.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			return c
		}
		t.Run(fmt.Sprintf("fencing=%t", fencing), func(t *testing.T) {
			f := NewFaults(t, len(addrs))
			var healthy float64
			for hung := range 3 {
				t.Run(fmt.Sprintf("hung=%d", hung), func(t *testing.T) {
					shared := open(t)
					clients := []*lock.Client{shared, shared, shared, shared, open(t), open(t), open(t), open(t)}
					for i := range hung {
						t.Cleanup(func() { f.Restart(t, i) })
						f.Hang(t, i)
					}
					rate := conformance.Handoffs(t, clients, fmt.Sprint("k", hung), 2*time.Second, run, fencing)
					if hung == 0 {
						healthy = rate
					}
					t.Logf("%s N=5 fencing=%t, %d hung: %.0f handoffs/s (%.2f of healthy)", name, fencing, hung, rate, rate/healthy)
				})
			}
			t.Run("DoLag", func(t *testing.T) {
				var worst time.Duration
				for i := range 20 {
					c := open(t)
					var lag time.Duration
					err := c.Do(t.Context(), fmt.Sprint("do", i), func(ctx context.Context) error {
						for j := range 3 {
							t.Cleanup(func() { f.Restart(t, j) })
							f.Hang(t, j)
						}
						<-ctx.Done()
						lag = time.Since(lock.FromContext(ctx).ValidUntil())
						return nil
					}, lock.WithTTL(time.Second))
					if !errors.Is(err, lock.ErrLost) {
						t.Errorf("Do = %v, want ErrLost", err)
					}
					for j := range 3 {
						f.Restart(t, j)
					}
					worst = max(worst, lag)
				}
				t.Logf("%s N=5 fencing=%t, 3 of 5 hung: Do's cancellation at most %v after ValidUntil over 20 runs", name, fencing, worst)
			})
		})
	}
}
