package lock_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// heldOnce refuses the first attempt and grants the others.
func heldOnce(_ context.Context, n int, _ string) (driver.Lease, error) {
	if n == 1 {
		return driver.Lease{}, driver.ErrHeld
	}
	return driver.Lease{}, nil
}

func TestAcquire_slowUnsubscribeDoesNotDelayTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A driver that takes longer to unsubscribe than the lock's
		// validity (a hung node) must not hold the lock back.
		wc := &waitingConn{scriptedConn: &scriptedConn{onAcquire: heldOnce}, closeDelay: 5 * time.Second}
		c := lock.OpenConnector(&scriptedConnector{conn: wc})
		defer c.Close()
		start := time.Now()
		l, err := c.Acquire(context.Background(), "k", lock.WithTTL(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Acquire took %v; want no wait for the unsubscription", d)
		}
		if err := l.Err(); err != nil {
			t.Errorf("Acquire returned a lock whose Err is %v", err)
		}
		synctest.Wait()
		if o := wc.open.Load(); o != 1 {
			t.Errorf("%d watches open while the unsubscription runs; want 1", o)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if o := wc.open.Load(); o != 0 {
			t.Errorf("%d watches left open after the unsubscription; want 0", o)
		}
	})
}

// slowObserver is an Observer whose first acquisition's end takes delay.
type slowObserver struct {
	delay time.Duration
	n     int
}

func (o *slowObserver) Start(ctx context.Context, op, _ string) (context.Context, func(lock.Event)) {
	return ctx, func(lock.Event) {
		if op == "acquire" {
			if o.n++; o.n == 1 {
				time.Sleep(o.delay)
			}
		}
	}
}

func (*slowObserver) Lost(context.Context, string, error) {}

func TestAcquire_neverReturnsALockPastItsValidity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{}
		c := lock.OpenConnector(&scriptedConnector{conn: sc})
		defer c.Close()
		c.SetObserver(&slowObserver{delay: 2 * time.Second})
		l, err := c.Acquire(context.Background(), "k", lock.WithTTL(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Err(); err != nil {
			t.Fatalf("Acquire returned a lock whose Err is %v", err)
		}
		if d := time.Until(l.ValidUntil()); d < 900*time.Millisecond {
			t.Errorf("the lock returned is valid for %v; want a fresh one", d)
		}
		synctest.Wait()
		acq, rel := sc.acquireCalls(), sc.releaseCalls()
		if len(acq) != 2 || len(rel) != 1 || rel[0].value != acq[0].value {
			t.Errorf("%d acquisitions, releases of %v; want 2, and the expired one given back", len(acq), rel)
		}
		if s := c.Stats(); s.Acquired != 1 || s.Failed != 1 {
			t.Errorf("Stats = %+v; want 1 acquired and 1 failed", s)
		}
	})
}

func TestTryAcquire_lockPastItsValidityIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{}
		c := lock.OpenConnector(&scriptedConnector{conn: sc})
		defer c.Close()
		c.SetObserver(&slowObserver{delay: 2 * time.Second})
		l, err := c.TryAcquire(context.Background(), "k", lock.WithTTL(time.Second))
		if err == nil || l != nil {
			t.Fatalf("TryAcquire = %v, %v; want a failure, the lock's validity having passed", l, err)
		}
		if errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("err = %v; must not say the key is held", err)
		}
		synctest.Wait()
		if rel := sc.releaseCalls(); len(rel) != 1 {
			t.Errorf("%d releases; want the expired lock given back", len(rel))
		}
	})
}

func TestDo_cancelsAtValidUntilWhileTheExtensionHangs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		onExtend func(ctx context.Context, n int) error
	}{
		// A driver that ignores the deadline it was given.
		{"ignoresItsDeadline", func(context.Context, int) error { time.Sleep(10 * time.Second); return nil }},
		// A driver that answers at the deadline: the extension is late,
		// and the lock is given back, which takes its time too.
		{"answersAtTheDeadline", func(ctx context.Context, _ int) error { <-ctx.Done(); return ctx.Err() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onExtend: tc.onExtend, onRelease: func(context.Context, int) error {
					time.Sleep(1500 * time.Millisecond)
					return nil
				}}
				c := lock.OpenConnector(&scriptedConnector{conn: extendingConn{sc}})
				defer c.Close()
				var lag time.Duration
				err := c.Do(context.Background(), "k", func(ctx context.Context) error {
					<-ctx.Done()
					lag = time.Since(lock.FromContext(ctx).ValidUntil())
					return nil
				}, lock.WithTTL(3*time.Second))
				if !errors.Is(err, lock.ErrLost) {
					t.Errorf("Do = %v, want ErrLost", err)
				}
				if lag != 0 {
					t.Errorf("fn's context was cancelled %v after ValidUntil; want at ValidUntil", lag)
				}
			})
		})
	}
}

func TestAcquire_misconfiguredEndsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"markedByTheDriver", fmt.Errorf("%w: the server refused the password", driver.ErrMisconfigured)},
		{"unknownHost", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) { return driver.Lease{}, tc.err }}
				c := lock.OpenConnector(&scriptedConnector{conn: sc})
				defer c.Close()
				start := time.Now()
				_, err := c.Acquire(context.Background(), "k")
				if !errors.Is(err, lock.ErrMisconfigured) {
					t.Errorf("Acquire = %v, want ErrMisconfigured", err)
				}
				if d, n := time.Since(start), len(sc.acquireCalls()); d != 0 || n != 1 {
					t.Errorf("Acquire gave up after %v and %d attempts; want at once, after one", d, n)
				}
				if n := len(sc.releaseCalls()); n != 0 {
					t.Errorf("%d cleanup releases; want none: the backend was never reached", n)
				}
			})
		})
	}
}

func TestAcquire_unreachableEndsAfterMaxUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) { return driver.Lease{}, refused }}
		c := lock.OpenConnector(&scriptedConnector{conn: sc})
		defer c.Close()
		start := time.Now()
		_, err := c.Acquire(context.Background(), "k")
		if !errors.Is(err, lock.ErrUnavailable) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Acquire = %v, want ErrUnavailable with the refusal", err)
		}
		if d := time.Since(start); d < lock.MaxUnavailable || d > lock.MaxUnavailable+time.Second {
			t.Errorf("Acquire gave up after %v; want MaxUnavailable (%v), or a little more", d, lock.MaxUnavailable)
		}
		if n := len(sc.releaseCalls()); n != 0 {
			t.Errorf("%d cleanup releases; want none: every connection was refused", n)
		}
	})
}

func TestAcquire_heldKeyRestartsTheUnavailableCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Refused for 6s, held once, refused for 6s more: never 10s in a
		// row, so the call waits on until its context ends.
		start := time.Now()
		sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
			if d := time.Since(start); d > 6*time.Second && d < 6500*time.Millisecond {
				return driver.Lease{}, driver.ErrHeld
			}
			return driver.Lease{}, fmt.Errorf("%w: no answer", driver.ErrUnavailable)
		}}
		c := lock.OpenConnector(&scriptedConnector{conn: sc})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 14*time.Second)
		defer cancel()
		_, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(100*time.Millisecond)))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire = %v, want the context's deadline", err)
		}
	})
}

func TestError_cutsALongCause(t *testing.T) {
	huge := strings.Repeat("h", 100_000)
	sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
		return driver.Lease{}, fmt.Errorf("dial tcp %s:6379: %w", huge, driver.ErrMisconfigured)
	}}
	c := lock.OpenConnector(&scriptedConnector{conn: sc})
	defer c.Close()
	_, err := c.TryAcquire(context.Background(), strings.Repeat("k", 500))
	if n := len(err.Error()); n > 1200 {
		t.Errorf("error of %d bytes; want it cut to a readable length", n)
	}
	if !errors.Is(err, lock.ErrMisconfigured) {
		t.Errorf("err = %.200v, want ErrMisconfigured still reachable", err)
	}
}

func TestClose_boundedWhileACallHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A backend that never answers, and ignores the context.
		stuck := make(chan struct{})
		sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
			<-stuck
			return driver.Lease{}, errors.New("connection closed")
		}}
		c := lock.OpenConnector(&scriptedConnector{conn: sc})
		go c.TryAcquire(context.Background(), "k")
		synctest.Wait()
		start := time.Now()
		c.Close()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Close took %v with a call hung; want at most 5s", d)
		}
		close(stuck)
	})
}

func TestTryAcquire_cleanupKeepsTheCallersDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The attempt fails at the caller's deadline, and the release that
		// cleans up after it takes its own time: the caller does not wait.
		sc := &scriptedConn{
			onAcquire: func(ctx context.Context, _ int, _ string) (driver.Lease, error) {
				<-ctx.Done()
				return driver.Lease{}, ctx.Err()
			},
			onRelease: func(context.Context, int) error { time.Sleep(time.Second); return nil },
		}
		c := lock.OpenConnector(&scriptedConnector{conn: sc})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := c.TryAcquire(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("TryAcquire = %v, want the deadline", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("TryAcquire returned after %v; want at the 3s deadline", d)
		}
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		if n := len(sc.releaseCalls()); n != 1 {
			t.Errorf("%d cleanup releases; want the one that went on in the background", n)
		}
	})
}
