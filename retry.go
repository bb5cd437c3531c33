package lock

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryStrategy decides whether, and after how long, [Client.Acquire] makes
// another attempt after a failed one. A strategy is a pure function of the
// attempt number. It keeps no state across calls, so one value may be
// shared by any number of goroutines and acquisitions. Whatever the
// strategy says, Acquire stops waiting when its context is done.
//
// The strategies of this package draw each delay at random from [d/2, d],
// where d is the delay their parameters give, so that waiters that failed
// together do not retry together.
type RetryStrategy interface {
	// Delay returns how long to wait after failed attempt number attempt
	// (counted from 1) before the next one, and false if there should be no
	// next attempt. A negative delay counts as zero.
	Delay(attempt int) (d time.Duration, retry bool)
}

// DefaultRetry is the strategy [Client.Acquire] uses without [WithRetry].
// It is exponential backoff from 10ms up to 500ms, with jitter. On drivers
// that announce releases, waiters also wake as soon as the key is released.
var DefaultRetry RetryStrategy = ExponentialBackoff(10*time.Millisecond, 500*time.Millisecond)

// NoRetry returns a strategy that makes one attempt only. With it, Acquire
// behaves like [Client.TryAcquire].
func NoRetry() RetryStrategy { return noRetry{} }

type noRetry struct{}

func (noRetry) Delay(int) (time.Duration, bool) { return 0, false }

// FixedDelay returns a strategy that retries after d each time, with
// jitter. d must be positive.
func FixedDelay(d time.Duration) RetryStrategy { return backoff{base: d, max: d, grow: growFixed} }

// LinearBackoff returns a strategy that waits step after the first attempt,
// 2*step after the second, and so on up to max, with jitter. step must be
// positive and max at least step.
func LinearBackoff(step, max time.Duration) RetryStrategy {
	return backoff{base: step, max: max, grow: growLinear}
}

// ExponentialBackoff returns a strategy that waits min after the first
// attempt and doubles the delay after each further attempt up to max, with
// jitter. min must be positive and max at least min.
func ExponentialBackoff(min, max time.Duration) RetryStrategy {
	return backoff{base: min, max: max, grow: growExponential}
}

// LimitAttempts returns a strategy that follows s but makes at most n
// attempts in all. n must be at least 1.
func LimitAttempts(s RetryStrategy, n int) RetryStrategy { return limit{s: s, n: n} }

type growth uint8

const (
	growFixed growth = iota
	growLinear
	growExponential
)

type backoff struct {
	base, max time.Duration
	grow      growth
}

func (b backoff) Delay(attempt int) (time.Duration, bool) {
	if attempt < 1 {
		attempt = 1
	}
	d := b.base
	switch b.grow {
	case growLinear:
		if n := time.Duration(attempt); d <= b.max/n {
			d *= n
		} else {
			d = b.max
		}
	case growExponential:
		for i := 1; i < attempt && d < b.max; i++ {
			if d > b.max/2 {
				d = b.max
				break
			}
			d *= 2
		}
	}
	d = min(d, b.max)
	return jitter(d), true
}

// jitter draws a delay uniformly from [d/2, d].
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return d - half + rand.N(half+1)
}

func (b backoff) validate() error {
	if b.base <= 0 {
		return fmt.Errorf("%w: retry delay %v is not positive", ErrInvalidOption, b.base)
	}
	if b.max < b.base {
		return fmt.Errorf("%w: retry maximum %v is below the first delay %v", ErrInvalidOption, b.max, b.base)
	}
	return nil
}

type limit struct {
	s RetryStrategy
	n int
}

func (l limit) Delay(attempt int) (time.Duration, bool) {
	if attempt >= l.n {
		return 0, false
	}
	return l.s.Delay(attempt)
}

func (l limit) validate() error {
	if l.n < 1 {
		return fmt.Errorf("%w: attempt limit %d is below 1", ErrInvalidOption, l.n)
	}
	return validateRetry(l.s)
}

// validateRetry checks a strategy built by this package's constructors.
// Strategies of other packages are taken as they are.
func validateRetry(s RetryStrategy) error {
	if s == nil {
		return fmt.Errorf("%w: nil retry strategy", ErrInvalidOption)
	}
	if v, ok := s.(interface{ validate() error }); ok {
		return v.validate()
	}
	return nil
}
