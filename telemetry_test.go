package lock_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
)

// recorder is an Observer that records what it is told.
type recorder struct {
	mu      sync.Mutex
	started []string
	events  []lock.Event
	lost    []string
}

type spanKey struct{}

func (r *recorder) Start(ctx context.Context, op, key string) (context.Context, func(lock.Event)) {
	r.mu.Lock()
	r.started = append(r.started, op)
	r.mu.Unlock()
	return context.WithValue(ctx, spanKey{}, op), func(ev lock.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, ev)
	}
}

func (r *recorder) Lost(_ context.Context, key string, why error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = append(r.lost, key+": "+why.Error())
}

func (r *recorder) ops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ops []string
	for _, ev := range r.events {
		ops = append(ops, ev.Op)
	}
	return ops
}

func TestObserver_toldOfEachOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, other := openMemory(t, store), openMemory(t, store)
		r := &recorder{}
		c.SetObserver(r)
		ctx := context.Background()

		blocker := mustAcquire(t, other, "k")
		go func() { time.Sleep(time.Second); blocker.Release(ctx) }()
		l, err := c.Acquire(ctx, "k", lock.WithTTL(time.Minute), lock.WithRetry(lock.FixedDelay(400*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Extend(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.TryAcquire(ctx, "", lock.WithTTL(time.Second)); err == nil {
			t.Fatal("TryAcquire of an empty key succeeded")
		}
		err = c.Do(ctx, "d", func(ctx context.Context) error {
			if op, _ := ctx.Value(spanKey{}).(string); op != "do" {
				t.Errorf("Do's function runs in the observer's %q context, want do's", op)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		lapsing := mustAcquire(t, c, "lapsing", lock.WithTTL(time.Second))
		<-lapsing.Done()

		want := []string{"acquire", "extend", "release", "acquire", "release", "do", "acquire"}
		if got := r.ops(); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("events %v, want %v (bad input is refused before any operation starts)", got, want)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		acq, rel := r.events[0], r.events[2]
		if acq.Key != "k" || acq.Attempts < 2 || acq.Wait < time.Second || !acq.Fenced || acq.Token != 2 || acq.Err != nil {
			t.Errorf("the waiting acquisition's event = %+v, want key k, at least 2 attempts, a wait of at least 1s, token 2", acq)
		}
		if rel.Held < 2*time.Second || rel.Err != nil {
			t.Errorf("the release's event = %+v, want held at least 2s", rel)
		}
		if len(r.lost) != 1 || !strings.HasPrefix(r.lost[0], "lapsing: ") {
			t.Errorf("lost = %v, want the lapsed lock once", r.lost)
		}
	})
}

func TestSetLogger_debugLinesForEachOperation(t *testing.T) {
	var buf bytes.Buffer
	c := openMemory(t, memory.New())
	c.SetLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	ctx := context.Background()
	l := mustAcquire(t, c, "k")
	l.Extend(ctx, time.Minute)
	l.Release(ctx)
	l.Release(ctx) // not held any more
	out := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="lock: acquire" key=k err=<nil> attempts=1`,
		`level=DEBUG msg="lock: extend" key=k err=<nil>`,
		`level=DEBUG msg="lock: release" key=k err=<nil>`,
		`msg="lock: release" key=k err="lock: release \"k\": lock is not held"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("debug log lacks %s:\n%s", want, out)
		}
	}
}

// Without an observer or debug logging, an acquire and release allocates
// what it did before telemetry existed: the value, the Lock and the
// wait-free path's one more.
func TestAllocs_observerOffCostsNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocations; make test runs this without it")
	}
	c := openMemory(t, memory.New())
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		l, err := c.TryAcquire(ctx, "k")
		if err != nil {
			panic(err)
		}
		l.Release(ctx)
	})
	if allocs > 3 {
		t.Errorf("TryAcquire+Release allocates %v times, want at most 3", allocs)
	}
	c.SetObserver(&recorder{})
	c.SetObserver(nil)
	if a := testing.AllocsPerRun(1000, func() {
		l, _ := c.TryAcquire(ctx, "k")
		l.Release(ctx)
	}); a > 3 {
		t.Errorf("after SetObserver(nil): %v allocations, want at most 3", a)
	}
}
