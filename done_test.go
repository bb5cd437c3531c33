package lock_test

// A lock's end: Done, Err and KeepAlive, and Close letting go of what the
// client holds. synctest makes the instants exact.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// closedAt waits for l's Done and returns when it was closed.
func closedAt(t *testing.T, l *lock.Lock) time.Time {
	t.Helper()
	select {
	case <-l.Done():
		return time.Now()
	case <-time.After(time.Hour):
		t.Fatal("Done not closed within an hour")
		return time.Time{}
	}
}

func TestDone_closesAtValidUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		if err := l.Err(); err != nil {
			t.Fatalf("Err of a valid lock = %v, want nil", err)
		}
		if at := closedAt(t, l); !at.Equal(l.ValidUntil()) {
			t.Errorf("Done closed at %v after ValidUntil, want at it", at.Sub(l.ValidUntil()))
		}
		if err := l.Err(); !errors.Is(err, lock.ErrLost) {
			t.Errorf("Err after the validity passed = %v, want an error matching ErrLost", err)
		}
		if got := c.Stats().Lost; got != 1 {
			t.Errorf("Stats().Lost = %d, want 1", got)
		}
	})
}

func TestDone_movesWithExtend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		done := l.Done()
		time.Sleep(500 * time.Millisecond)
		if err := l.Extend(context.Background(), 2*time.Second); err != nil {
			t.Fatal(err)
		}
		until := l.ValidUntil()
		if at := closedAt(t, l); !at.Equal(until) {
			t.Errorf("Done closed %v after the extended ValidUntil, want at it", at.Sub(until))
		}
		select {
		case <-done:
		default:
			t.Error("the channel returned before the extension was not closed")
		}
	})
}

func TestDone_afterReleaseAndBeforeFirstCall(t *testing.T) {
	c := openMemory(t, memory.New())
	l := mustAcquire(t, c, "k")
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done(): // Done was first called after the release
	default:
		t.Fatal("Done of a released lock is not closed")
	}
	if err := l.Err(); !errors.Is(err, lock.ErrNotHeld) || errors.Is(err, lock.ErrLost) {
		t.Errorf("Err of a released lock = %v, want an error matching ErrNotHeld, not ErrLost", err)
	}
	if got := c.Stats().Lost; got != 0 {
		t.Errorf("Stats().Lost = %d after a release, want 0", got)
	}
}

// A backend that hangs on the extension: the keeper's Extend is bounded by
// the validity, and Done closes at ValidUntil, not when the hung call
// gives up.
func TestKeepAlive_hungBackendEndsAtValidUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(ctx context.Context, n int) error {
			<-ctx.Done()
			return ctx.Err()
		}}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(3*time.Second))
		stop := l.KeepAlive()
		defer stop()
		if at := closedAt(t, l); !at.Equal(l.ValidUntil()) {
			t.Errorf("Done closed %v after ValidUntil, want at it", at.Sub(l.ValidUntil()))
		}
		if err := l.Err(); !errors.Is(err, lock.ErrLost) {
			t.Errorf("Err = %v, want an error matching ErrLost", err)
		}
		if n := len(sc.extendCalls()); n != 1 {
			t.Errorf("%d extensions, want 1 (hung until the validity passed)", n)
		}
	})
}

func TestKeepAlive_keepsUntilStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		l := mustAcquire(t, c, "k", lock.WithTTL(300*time.Millisecond))
		stop := l.KeepAlive()
		time.Sleep(10 * time.Second)
		select {
		case <-l.Done():
			t.Fatalf("Done closed while kept alive: %v", l.Err())
		default:
		}
		if got := c.Stats().Extended; got < 30 {
			t.Errorf("%d extensions in 10s with a TTL of 300ms, want one every 100ms", got)
		}
		stop()
		closedAt(t, l)
		if d := time.Until(l.ValidUntil()); d > 0 {
			t.Errorf("Done closed %v before ValidUntil", d)
		}
	})
}

func TestKeepAlive_withoutExtenderEndsAtValidUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openScripted(t, &scriptedConn{}, false)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		stop := l.KeepAlive()
		defer stop()
		if at := closedAt(t, l); !at.Equal(l.ValidUntil()) {
			t.Errorf("Done closed %v after ValidUntil, want at it", at.Sub(l.ValidUntil()))
		}
	})
}

func TestClose_releasesHeldLocksAndEndsThem(t *testing.T) {
	store := memory.New()
	c, other := openMemory(t, store), openMemory(t, store)
	ctx := context.Background()
	a, b := mustAcquire(t, c, "a"), mustAcquire(t, c, "b")
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	done := a.Done() // made before Close, not after
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, other, "a") // free at once
	select {
	case <-done:
	default:
		t.Error("Done of a lock Close released is not closed when Close returns")
	}
	if err := a.Err(); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Err of a lock Close released = %v, want an error matching ErrClosed", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Errorf("Release of a lock Close released = %v, want nil", err)
	}
	if err := b.Err(); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Err of a lock released before Close = %v, want an error matching ErrNotHeld", err)
	}
	if got := c.Stats(); got.Released != 2 || got.Lost != 0 {
		t.Errorf("Stats() = %+v, want 2 released (one by Close), none lost", got)
	}
}

// An acquisition in flight when Close is called: Close waits for it, and
// the lock it brings back is released, not left behind. (Real time:
// synctest does not count a goroutine blocked on a mutex, as Close is,
// as blocked.)
func TestClose_waitsForAcquisitionInFlightAndReleasesIt(t *testing.T) {
	inFlight, unblock := make(chan struct{}), make(chan struct{})
	sc := &scriptedConn{onAcquire: func(ctx context.Context, n int, value string) (driver.Lease, error) {
		close(inFlight)
		<-unblock
		return driver.Lease{}, nil
	}}
	c := openScripted(t, sc, false)
	got := make(chan error, 1)
	go func() {
		_, err := c.TryAcquire(context.Background(), "k")
		got <- err
	}()
	<-inFlight
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while an acquisition was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(unblock)
	if err := <-got; !errors.Is(err, lock.ErrClosed) {
		t.Errorf("TryAcquire that Close overtook = %v, want an error matching ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	rel := sc.releaseCalls()
	if len(rel) != 1 || rel[0].value != sc.acquireCalls()[0].value {
		t.Errorf("releases after Close = %+v, want the acquired value released once", rel)
	}
}

func TestClose_lockItCouldNotRelease(t *testing.T) {
	sc := &scriptedConn{onRelease: func(context.Context, int) error { return errBackendDown }}
	c := openScripted(t, sc, false)
	l := mustAcquire(t, c, "k")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Release of a lock Close failed to release = %v, want an error matching ErrClosed", err)
	}
	if err := l.Err(); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Err = %v, want an error matching ErrClosed", err)
	}
}

func TestDo_cancelledByClose(t *testing.T) {
	store := memory.New()
	c := openMemory(t, store)
	running := make(chan struct{})
	did := make(chan error, 1)
	go func() {
		did <- c.Do(context.Background(), "k", func(ctx context.Context) error {
			lock.FromContext(ctx).Done() // made before Close, not after
			close(running)
			<-ctx.Done()
			if cause := context.Cause(ctx); !errors.Is(cause, lock.ErrClosed) {
				t.Errorf("cause = %v, want an error matching ErrClosed", cause)
			}
			return nil
		})
	}()
	<-running
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-did:
		if !errors.Is(err, lock.ErrClosed) {
			t.Errorf("Do = %v, want an error matching ErrClosed", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Do's function still runs a second after Close returned")
	}
	if _, isHeld, _ := inspect(t, store, "k"); isHeld {
		t.Error("the key is still held after Close returned")
	}
}

func TestErr_saysWhyTheLockWasLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		expired := mustAcquire(t, c, "expired", lock.WithTTL(time.Second))
		<-expired.Done()
		if err := expired.Err(); !errors.Is(err, lock.ErrLost) || !strings.Contains(err.Error(), "validity ran out") {
			t.Errorf("Err after the validity ran out = %v", err)
		}
		sc := &scriptedConn{onExtend: func(context.Context, int) error { return driver.ErrNotHeld }}
		refused := mustAcquire(t, openScripted(t, sc, true), "refused")
		refused.Extend(context.Background(), time.Minute)
		if err := refused.Err(); !errors.Is(err, lock.ErrLost) || !strings.Contains(err.Error(), "no longer holds it") {
			t.Errorf("Err after the backend refused an extension = %v", err)
		}
	})
}
