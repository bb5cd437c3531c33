package benchmark

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
)

// pausedWait is how long the scenario waits for the takeover: the lease,
// and room for a slow wake-up.
const pausedWait = PausedTTL + 10*time.Second

// runPaused runs the paused-holder scenario on every driver of ready at
// once: each on its own backend, with a second client of its own, and
// with little to do but wait out a lease.
func runPaused(ctx context.Context, ready []probed, keys *Keys, p *Progress) []Paused {
	p.Step("paused holders", pausedWait)
	out := make([]Paused, len(ready))
	var wg sync.WaitGroup
	for i, pr := range ready {
		key := keys.Next("paused")
		wg.Go(func() {
			out[i] = Paused{Driver: pr.Driver, TTL: PausedTTL.String()}
			if ctx.Err() != nil {
				out[i].Error = "interrupted"
				return
			}
			second, err := open(ctx, pr.Driver, pr.DSN, p.Logger())
			if err != nil {
				out[i].Error = "open a second client: " + err.Error()
				return
			}
			defer second.Close()
			out[i] = measurePaused(ctx, pr.client, second, key, pausedWait)
			out[i].Driver = pr.Driver
		})
	}
	wg.Wait()
	for _, ps := range out {
		if ps.Error != "" {
			p.Logf("%s: paused holder: %s", ps.Driver, abridge(ps.Error))
		}
	}
	return out
}

// PausedTTL is the lease of the paused-holder scenario.
const PausedTTL = time.Second

// Paused is what the paused-holder scenario saw on one backend. A first
// holder takes a key with a lease of PausedTTL and stops, as a process in
// a long GC pause or stopped by SIGSTOP would: it neither extends nor
// releases. A second holder, on a client of its own, waits for the key,
// gets it once the lease has passed, and writes to a resource. Then the
// first one wakes and writes too, with the token it was given. The
// resource is twice: behind a fencing guard, and a plain value.
type Paused struct {
	Driver string `json:"driver"`
	TTL    string `json:"ttl"`
	// TakenOverMs is how long after the first holder's acquisition the
	// second one got the key: the lease, and the backend's wake-up delay.
	TakenOverMs float64 `json:"taken_over_ms"`
	// ToldLost says that the first holder's Lock had reported the loss
	// (Done closed, Err set) by the time it woke, as the core promises:
	// its own check would have stopped it.
	ToldLost bool `json:"told_lost"`
	// FirstToken and SecondToken are the holders' fencing tokens, zero
	// where the backend gave none.
	FirstToken  uint64 `json:"first_token,omitempty"`
	SecondToken uint64 `json:"second_token,omitempty"`
	// Guarded is what the guard did with the first holder's stale write:
	// "refused", or "no tokens" where the backend gives none (Redlock
	// without fencing=true), so that nothing can guard the resource.
	Guarded string `json:"guarded"`
	// Unguarded is what the same write did to the plain value: it
	// overwrote the second holder's.
	Unguarded string `json:"unguarded"`
	Error     string `json:"error,omitempty"`
}

// The outcomes of the scenario's writes.
const (
	PausedRefused   = "refused"
	PausedNoTokens  = "no tokens"
	PausedAdmitted  = "admitted"
	PausedOverwrote = "overwrote the newer write"
)

// measurePaused runs the paused-holder scenario on key, with first and
// second as the two holders' clients (distinct clients, as two processes
// would have). It waits at most wait for the takeover.
func measurePaused(ctx context.Context, first, second *lock.Client, key string, wait time.Duration) Paused {
	p := Paused{TTL: PausedTTL.String()}
	fail := func(format string, args ...any) Paused {
		p.Error = fmt.Sprintf(format, args...)
		return p
	}
	start := time.Now()
	paused, err := first.TryAcquire(ctx, key, lock.WithTTL(PausedTTL))
	if err != nil {
		return fail("the first holder's acquisition: %v", err)
	}
	// The first holder pauses here. Its lock is released when the run ends,
	// which does nothing once another holder has the key.
	defer paused.Release(context.WithoutCancel(ctx)) //nolint:errcheck // see above

	wctx, cancel := context.WithTimeout(ctx, wait)
	taker, err := second.Acquire(wctx, key, lock.WithTTL(10*PausedTTL))
	cancel()
	if err != nil {
		return fail("the second holder did not get the key within %v: %v", wait, err)
	}
	defer taker.Release(context.WithoutCancel(ctx)) //nolint:errcheck // its key expires anyway
	p.TakenOverMs = ms(time.Since(start))

	// The second holder writes; then the first wakes and writes as well.
	guard := fencing.NewMemoryGuard()
	written := func(context.Context) error { return nil } // the resource's write itself
	t1, ok1 := paused.Token()
	t2, ok2 := taker.Token()
	p.FirstToken, p.SecondToken = uint64(t1), uint64(t2)
	select {
	case <-paused.Done():
		p.ToldLost = paused.Err() != nil
	default:
	}
	if !ok1 || !ok2 {
		p.Guarded = PausedNoTokens
	} else {
		if err := guard.Do(ctx, "resource", t2, written); err != nil {
			return fail("the second holder's guarded write: %v", err)
		}
		switch err := guard.Do(ctx, "resource", t1, written); {
		case errors.Is(err, fencing.ErrStale):
			p.Guarded = PausedRefused
		case err == nil:
			p.Guarded = PausedAdmitted
			return fail("the guard admitted the paused holder's token %d after %d", t1, t2)
		default:
			return fail("the paused holder's guarded write: %v", err)
		}
	}
	// A plain value checks nothing: the paused holder's write lands on the
	// newer one, whatever the backend. The column is there for contrast.
	p.Unguarded = PausedOverwrote
	if !p.ToldLost {
		return fail("the paused holder's lock did not report its loss %v after its acquisition, past its %v lease", time.Since(start).Round(time.Millisecond), PausedTTL)
	}
	return p
}

// writePaused writes the paused-holder section: a row per driver.
func writePaused(b *strings.Builder, r *Report) {
	if len(r.Paused) == 0 {
		return
	}
	fmt.Fprintf(b, "\npaused holder: a holder takes a key with a %v lease and stops (a GC pause, SIGSTOP); a holder on another\n"+
		"client waits for the key and writes to a resource; then the first wakes and writes with its old token.\n\n", PausedTTL)
	groups := []string{"", "", "", "the paused holder's write", "the paused holder's write"}
	headers := []string{"driver", "taken over after", "its lock said lost", "through a fencing guard", "to a plain value"}
	var rows [][]string
	for _, ps := range r.Paused {
		if ps.Error != "" {
			rows = append(rows, []string{ps.Driver, "failed: " + abridge(ps.Error), "-", "-", "-"})
			continue
		}
		guarded := ps.Guarded
		switch ps.Guarded {
		case PausedRefused:
			guarded = fmt.Sprintf("refused (token %d < %d)", ps.FirstToken, ps.SecondToken)
		case PausedNoTokens:
			guarded = "no tokens to guard with"
		}
		lost := "no: BROKEN"
		if ps.ToldLost {
			lost = "yes"
		}
		rows = append(rows, []string{ps.Driver, millis(ps.TakenOverMs), lost, guarded, ps.Unguarded})
	}
	writeAligned(b, groups, headers, rows)
	if slices.ContainsFunc(r.Paused, func(ps Paused) bool { return ps.Guarded == PausedNoTokens }) {
		b.WriteString("no tokens: Redlock gives fencing tokens only with fencing=true in its DSN.\n")
	}
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
