package lock_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/distlock/lock"
)

const ms = time.Millisecond

// checkJitter fails the test unless d lies in [nominal/2, nominal].
func checkJitter(t *testing.T, attempt int, d, nominal time.Duration) {
	t.Helper()
	if d < nominal/2 || d > nominal {
		t.Errorf("Delay(%d) = %v, want within [%v, %v]", attempt, d, nominal/2, nominal)
	}
}

func TestBackoff_delayWithinJitterOfNominal(t *testing.T) {
	tests := []struct {
		name    string
		s       lock.RetryStrategy
		nominal func(attempt int) time.Duration
	}{
		{
			name:    "FixedDelay",
			s:       lock.FixedDelay(100 * ms),
			nominal: func(int) time.Duration { return 100 * ms },
		},
		{
			name:    "LinearBackoff grows by step",
			s:       lock.LinearBackoff(10*ms, 95*ms),
			nominal: func(a int) time.Duration { return min(time.Duration(a)*10*ms, 95*ms) },
		},
		{
			name:    "ExponentialBackoff doubles",
			s:       lock.ExponentialBackoff(10*ms, 500*ms),
			nominal: func(a int) time.Duration { return min(10*ms<<(a-1), 500*ms) },
		},
		{
			name:    "DefaultRetry is exponential from 10ms to 500ms",
			s:       lock.DefaultRetry,
			nominal: func(a int) time.Duration { return min(10*ms<<(a-1), 500*ms) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for attempt := 1; attempt <= 20; attempt++ {
				nominal := tt.nominal(attempt)
				lo, hi := nominal, time.Duration(0)
				for range 200 {
					d, again := tt.s.Delay(attempt)
					if !again {
						t.Fatalf("Delay(%d) gave up; backoff strategies retry forever", attempt)
					}
					checkJitter(t, attempt, d, nominal)
					lo, hi = min(lo, d), max(hi, d)
				}
				// 200 uniform draws from [n/2, n] all landing in one fifth of
				// the range is a 1 in 10^19 event: the delay is not jittered.
				if spread := hi - lo; spread < nominal/5 {
					t.Errorf("Delay(%d): 200 draws spread over only %v of [%v, %v]; want jitter", attempt, spread, nominal/2, nominal)
				}
			}
		})
	}
}

func TestBackoff_cappedWithoutOverflow(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	tests := []struct {
		name     string
		s        lock.RetryStrategy
		attempts []int
		nominal  func(attempt int) time.Duration
	}{
		{"FixedDelay max duration", lock.FixedDelay(maxDur), []int{1, 2, 1e6, math.MaxInt},
			func(int) time.Duration { return maxDur }},
		{"LinearBackoff huge max", lock.LinearBackoff(ms, maxDur), []int{1e6},
			func(a int) time.Duration { return time.Duration(a) * ms }},
		{"LinearBackoff huge max, huge attempt", lock.LinearBackoff(ms, maxDur), []int{math.MaxInt},
			func(int) time.Duration { return maxDur }},
		{"LinearBackoff capped", lock.LinearBackoff(ms, time.Second), []int{1000, 1001, 1e6, math.MaxInt},
			func(int) time.Duration { return time.Second }},
		{"ExponentialBackoff huge max", lock.ExponentialBackoff(ms, maxDur), []int{64, 1e6, math.MaxInt},
			func(int) time.Duration { return maxDur }},
		{"ExponentialBackoff huge max, moderate attempt", lock.ExponentialBackoff(ms, maxDur), []int{30},
			func(a int) time.Duration { return ms << (a - 1) }},
		{"ExponentialBackoff capped", lock.ExponentialBackoff(ms, time.Second), []int{11, 12, 1e6, math.MaxInt},
			func(int) time.Duration { return time.Second }},
		{"ExponentialBackoff max not a power of two of min", lock.ExponentialBackoff(3*ms, 1000*ms), []int{10, 11, 100},
			func(int) time.Duration { return 1000 * ms }},
		{"one nanosecond", lock.FixedDelay(1), []int{1, 1e6},
			func(int) time.Duration { return 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, attempt := range tt.attempts {
				for range 50 {
					d, again := tt.s.Delay(attempt)
					if !again {
						t.Fatalf("Delay(%d) gave up", attempt)
					}
					if d <= 0 {
						t.Fatalf("Delay(%d) = %v: overflowed or non-positive", attempt, d)
					}
					checkJitter(t, attempt, d, tt.nominal(attempt))
				}
			}
		})
	}
}

func TestBackoff_keepsNoStateAcrossCalls(t *testing.T) {
	strategies := map[string]lock.RetryStrategy{
		"LinearBackoff":      lock.LinearBackoff(10*ms, time.Second),
		"ExponentialBackoff": lock.ExponentialBackoff(10*ms, time.Second),
	}
	for name, s := range strategies {
		t.Run(name, func(t *testing.T) {
			for range 100 {
				s.Delay(50)
			}
			for range 100 {
				d, _ := s.Delay(1)
				checkJitter(t, 1, d, 10*ms)
			}
		})
	}
}

func TestNoRetry_stopsAtOnce(t *testing.T) {
	for _, attempt := range []int{1, 2, 100} {
		if d, again := lock.NoRetry().Delay(attempt); again {
			t.Errorf("NoRetry().Delay(%d) = %v, true; want no retry", attempt, d)
		}
	}

	sc := &scriptedConn{onAcquire: heldAlways}
	c := openScripted(t, sc, false)
	_, err := c.Acquire(context.Background(), "k", lock.WithRetry(lock.NoRetry()))
	if !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("Acquire with NoRetry on a held key: err = %v, want ErrNotAcquired", err)
	}
	if n := len(sc.acquireCalls()); n != 1 {
		t.Errorf("Acquire with NoRetry made %d attempts, want 1", n)
	}
}

func TestLimitAttempts_allowsExactlyN(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		s := lock.LimitAttempts(lock.FixedDelay(100*ms), n)
		for attempt := 1; attempt <= n+2; attempt++ {
			d, again := s.Delay(attempt)
			if want := attempt < n; again != want {
				t.Errorf("LimitAttempts(_, %d).Delay(%d) retry = %v, want %v", n, attempt, again, want)
			}
			if again {
				checkJitter(t, attempt, d, 100*ms)
			}
		}
	}

	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("Acquire with n=%d", n), func(t *testing.T) {
			sc := &scriptedConn{onAcquire: heldAlways}
			c := openScripted(t, sc, false)
			_, err := c.Acquire(context.Background(), "k", lock.WithRetry(lock.LimitAttempts(lock.FixedDelay(ms), n)))
			if !errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("err = %v, want ErrNotAcquired", err)
			}
			if got := len(sc.acquireCalls()); got != n {
				t.Errorf("LimitAttempts(_, %d): %d attempts, want %d", n, got, n)
			}
		})
	}
}

// customStrategy is a strategy from outside the package: taken as it is.
type customStrategy struct{}

func (customStrategy) Delay(int) (time.Duration, bool) { return -time.Second, false }

func TestWithRetry_validation(t *testing.T) {
	tests := []struct {
		name  string
		s     lock.RetryStrategy
		valid bool
	}{
		{"nil strategy", nil, false},
		{"FixedDelay zero", lock.FixedDelay(0), false},
		{"FixedDelay negative", lock.FixedDelay(-ms), false},
		{"FixedDelay positive", lock.FixedDelay(1), true},
		{"LinearBackoff zero step", lock.LinearBackoff(0, time.Second), false},
		{"LinearBackoff negative step", lock.LinearBackoff(-ms, time.Second), false},
		{"LinearBackoff max below step", lock.LinearBackoff(time.Second, time.Second-1), false},
		{"LinearBackoff max equal to step", lock.LinearBackoff(time.Second, time.Second), true},
		{"ExponentialBackoff zero min", lock.ExponentialBackoff(0, time.Second), false},
		{"ExponentialBackoff negative min", lock.ExponentialBackoff(-ms, time.Second), false},
		{"ExponentialBackoff max below min", lock.ExponentialBackoff(time.Second, ms), false},
		{"ExponentialBackoff max equal to min", lock.ExponentialBackoff(ms, ms), true},
		{"LimitAttempts zero", lock.LimitAttempts(lock.FixedDelay(ms), 0), false},
		{"LimitAttempts negative", lock.LimitAttempts(lock.FixedDelay(ms), -1), false},
		{"LimitAttempts one", lock.LimitAttempts(lock.FixedDelay(ms), 1), true},
		{"LimitAttempts of nil", lock.LimitAttempts(nil, 3), false},
		{"LimitAttempts of an invalid strategy", lock.LimitAttempts(lock.FixedDelay(0), 3), false},
		{"LimitAttempts of NoRetry", lock.LimitAttempts(lock.NoRetry(), 3), true},
		{"NoRetry", lock.NoRetry(), true},
		{"strategy of another package", customStrategy{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scriptedConn{}
			c := openScripted(t, sc, false)
			l, err := c.Acquire(context.Background(), "k", lock.WithRetry(tt.s))
			if tt.valid {
				if err != nil {
					t.Fatalf("Acquire: %v, want success", err)
				}
				l.Release(context.Background())
				return
			}
			if !errors.Is(err, lock.ErrInvalidOption) {
				t.Errorf("Acquire: err = %v, want ErrInvalidOption", err)
			}
			if n := len(sc.acquireCalls()); n != 0 {
				t.Errorf("driver called %d times for an invalid option, want 0", n)
			}
		})
	}
}
