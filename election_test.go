package lock_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/locktest"
)

// election returns the election name on c, with opts, or fails the test.
func election(t *testing.T, c *lock.Client, name string, opts ...lock.Option) *lock.Election {
	t.Helper()
	e, err := c.Election(name, opts...)
	if err != nil {
		t.Fatalf("Election(%q): %v", name, err)
	}
	return e
}

// campaign campaigns on e with value, or fails the test.
func campaign(t *testing.T, e *lock.Election, value string) *lock.Term {
	t.Helper()
	term, err := e.Campaign(t.Context(), value)
	if err != nil {
		t.Fatalf("Campaign(%q): %v", value, err)
	}
	return term
}

// leader returns e's leader, failing the test if nobody leads.
func leader(t *testing.T, e *lock.Election) lock.Leader {
	t.Helper()
	ld, ok, err := e.Leader(t.Context())
	if err != nil || !ok {
		t.Fatalf("Leader = %+v, %v, %v; want a leader", ld, ok, err)
	}
	return ld
}

func TestElection_resignHandsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		a, b := openMemory(t, store), openMemory(t, store)
		ea, eb := election(t, a, "jobs"), election(t, b, "jobs")
		first := campaign(t, ea, "10.0.0.1:8080")
		if ld := leader(t, eb); ld.Value != "10.0.0.1:8080" || ld.ID != first.Lock().ID() {
			t.Errorf("Leader = %+v, want the first term's value and ID %s", ld, first.Lock().ID())
		}
		elected := make(chan *lock.Term)
		go func() {
			term, err := eb.Campaign(context.Background(), "10.0.0.2:8080")
			if err != nil {
				t.Errorf("second Campaign: %v", err)
			}
			elected <- term
		}()
		synctest.Wait()
		select {
		case <-elected:
			t.Fatal("a second candidate was elected while the first leads")
		default:
		}
		time.Sleep(time.Second) // the first term lasts, kept alive, past its TTL's third
		if err := first.Err(); err != nil {
			t.Fatalf("first term ended while kept alive: %v", err)
		}
		if err := first.Resign(context.Background()); err != nil {
			t.Fatalf("Resign: %v", err)
		}
		at := time.Now()
		second := <-elected
		if d := time.Since(at); d > 0 {
			t.Errorf("second term elected %v after the resignation; the memory driver announces releases, so want at once", d)
		}
		if err := first.Err(); !errors.Is(err, lock.ErrNotHeld) || errors.Is(err, lock.ErrLost) {
			t.Errorf("first term's Err after Resign = %v, want ErrNotHeld (released), not ErrLost", err)
		}
		t1, _ := first.Token()
		t2, ok := second.Token()
		if !ok || t2 <= t1 {
			t.Errorf("second term's token %v (fenced %v), want greater than the first's %v", t2, ok, t1)
		}
		if ld := leader(t, ea); ld.Value != "10.0.0.2:8080" || ld.Token != t2 || !ld.Fenced {
			t.Errorf("Leader = %+v, want the second term's value and token %v", ld, t2)
		}
		if err := second.Resign(context.Background()); err != nil {
			t.Fatalf("second Resign: %v", err)
		}
		if ld, ok, err := ea.Leader(t.Context()); ok || err != nil {
			t.Errorf("Leader after every term resigned = %+v, %v, %v; want none", ld, ok, err)
		}
		if err := second.Resign(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Resign of a resigned term = %v, want ErrNotHeld", err)
		}
	})
}

// Two candidates of one client: the release hands the lead over in one
// step (driver.Transferer), and the new term must carry its own value.
func TestElection_handoverWithinClientKeepsValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		e := election(t, c, "jobs")
		first := campaign(t, e, "first")
		elected := make(chan *lock.Term)
		go func() {
			term, _ := e.Campaign(context.Background(), "second")
			elected <- term
		}()
		synctest.Wait()
		first.Resign(context.Background())
		second := <-elected
		if second == nil {
			t.Fatal("second Campaign failed")
		}
		if ld := leader(t, e); ld.Value != "second" || ld.ID != second.Lock().ID() {
			t.Errorf("Leader = %+v, want value second and ID %s", ld, second.Lock().ID())
		}
		second.Resign(context.Background())
	})
}

func TestTerm_lostEndsByValidity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		a, other := lock.OpenConnector(b), lock.OpenConnector(b)
		defer a.Close()
		defer other.Close()
		const ttl = time.Second
		ea := election(t, a, "jobs", lock.WithTTL(ttl))
		first := campaign(t, ea, "a")
		b.HangExtensions(1_000) // the leader's backend stops answering it
		defer b.Resume()
		elected := make(chan time.Time, 1)
		go func() {
			term, err := election(t, other, "jobs", lock.WithTTL(ttl)).Campaign(context.Background(), "b")
			if err != nil {
				t.Errorf("second Campaign: %v", err)
				return
			}
			elected <- time.Now()
			term.Resign(context.Background())
		}()
		<-first.Done()
		if now := time.Now(); now.After(first.ValidUntil()) {
			t.Errorf("lost term's Done closed %v after its validity", now.Sub(first.ValidUntil()))
		}
		if err := first.Err(); !errors.Is(err, lock.ErrLost) {
			t.Errorf("Err of the lost term = %v, want ErrLost", err)
		}
		at := <-elected
		if at.Before(first.ValidUntil()) {
			t.Errorf("second term elected %v before the first's validity ended", first.ValidUntil().Sub(at))
		}
		if err := first.Resign(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Resign of a lost term = %v, want ErrNotHeld", err)
		}
	})
}

func TestElection_observeSeesEachLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, watcher := openMemory(t, store), openMemory(t, store)
		ctx, cancel := context.WithCancel(context.Background())
		seen := election(t, watcher, "jobs").Observe(ctx)
		e := election(t, c, "jobs")
		for _, v := range []string{"a", "b", "c"} {
			term := campaign(t, e, v)
			ld := <-seen
			tok, _ := term.Token()
			if ld.Value != v || ld.Token != tok {
				t.Errorf("Observe sent %+v, want value %s with token %v", ld, v, tok)
			}
			time.Sleep(50 * time.Millisecond)
			term.Resign(context.Background())
		}
		cancel()
		for ld := range seen {
			t.Errorf("Observe sent %+v after its context ended", ld)
		}
	})
}

func TestElection_leadCancelsOnLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := lock.OpenConnector(b)
		defer c.Close()
		e := election(t, c, "jobs")
		err := e.Lead(context.Background(), "a", func(ctx context.Context) error {
			if l := lock.FromContext(ctx); l == nil || l.Key() != e.Key() {
				t.Errorf("FromContext in Lead = %v, want the term's lock", l)
			}
			b.Lose(e.Key())
			<-ctx.Done()
			return nil
		})
		if !errors.Is(err, lock.ErrLost) {
			t.Errorf("Lead after the term was lost = %v, want ErrLost", err)
		}
		if err := e.Lead(context.Background(), "a", func(context.Context) error { return nil }); err != nil {
			t.Errorf("Lead = %v, want nil", err)
		}
		if _, ok, _ := e.Leader(context.Background()); ok {
			t.Error("Lead did not resign when its function returned")
		}
	})
}

func TestElection_badInput(t *testing.T) {
	c := openMemory(t, memory.New())
	for _, name := range []string{"", "a\x00b", strings.Repeat("x", 497)} {
		if _, err := c.Election(name); !errors.Is(err, lock.ErrInvalidKey) {
			t.Errorf("Election(%.10q...) = %v, want ErrInvalidKey", name, err)
		}
	}
	if _, err := c.Election(strings.Repeat("x", 496)); err != nil {
		t.Errorf("Election of a 496-byte name: %v", err)
	}
	if _, err := c.Election("jobs", lock.WithTTL(time.Nanosecond)); !errors.Is(err, lock.ErrInvalidTTL) {
		t.Errorf("Election with a TTL of 1ns = %v, want ErrInvalidTTL", err)
	}
	e := election(t, c, "jobs")
	if _, err := e.Campaign(t.Context(), strings.Repeat("v", lock.MaxLeaderValue+1)); !errors.Is(err, lock.ErrInvalidOption) {
		t.Errorf("Campaign with a value over MaxLeaderValue = %v, want ErrInvalidOption", err)
	}
	// The longest value, in bytes that are not text, comes back whole.
	v := strings.Repeat("\xff\x00", lock.MaxLeaderValue)[:lock.MaxLeaderValue]
	term := campaign(t, e, v)
	defer term.Resign(t.Context())
	if ld := leader(t, e); ld.Value != v {
		t.Errorf("Leader value = %q, want %q", ld.Value, v)
	}
	if _, err := e.TryCampaign(t.Context(), "b"); !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("TryCampaign while another leads = %v, want ErrNotAcquired", err)
	}
}

// MaxLeaderValue is as long as a lock value of driver.MaxValueLen
// characters can carry: a leader value of that many bytes reaches the
// driver in a value the driver contract allows, and one byte more would
// not fit. A pod's DNS name with its port (issue 29) fits.
func TestElection_longestLeaderValue(t *testing.T) {
	if n := len("scheduler-0.scheduler.default.svc.cluster.local:8080"); lock.MaxLeaderValue < n {
		t.Errorf("MaxLeaderValue = %d, want at least %d for a pod's DNS name and port", lock.MaxLeaderValue, n)
	}
	const random = 27 // a value's random part
	if n := random + base64.RawURLEncoding.EncodedLen(lock.MaxLeaderValue+1); n <= driver.MaxValueLen {
		t.Errorf("a leader value of MaxLeaderValue+1 bytes makes a value of %d characters, within driver.MaxValueLen (%d): MaxLeaderValue could be larger", n, driver.MaxValueLen)
	}
	sc := &scriptedConn{}
	e := election(t, openScripted(t, sc, false), "jobs")
	v := strings.Repeat("[2001:db8::1]:8080/", lock.MaxLeaderValue)[:lock.MaxLeaderValue]
	if _, err := e.TryCampaign(t.Context(), v); err != nil {
		t.Fatalf("TryCampaign with a value of MaxLeaderValue bytes: %v", err)
	}
	if _, err := e.TryCampaign(t.Context(), v+"x"); !errors.Is(err, lock.ErrInvalidOption) {
		t.Errorf("TryCampaign with a value of MaxLeaderValue+1 bytes = %v, want ErrInvalidOption", err)
	}
	calls := sc.acquireCalls()
	if len(calls) != 1 {
		t.Fatalf("the driver was asked %d times, want once (the longer value is refused before)", len(calls))
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	if got := calls[0].value; len(got) > driver.MaxValueLen || !valid.MatchString(got) {
		t.Errorf("the driver got value %q (%d characters), want at most %d of [A-Za-z0-9_-]", got, len(got), driver.MaxValueLen)
	}
}

// An election's key is not one that users' locks are likely to take.
func TestElection_keyIsApart(t *testing.T) {
	c := openMemory(t, memory.New())
	e := election(t, c, "jobs")
	term := campaign(t, e, "a")
	defer term.Resign(t.Context())
	l := mustAcquire(t, c, "jobs")
	l.Release(t.Context())
	if !strings.HasPrefix(e.Key(), "jobs\x1f") {
		t.Errorf("Key = %q, want the name and the unit separator first", e.Key())
	}
}

func ExampleElection() {
	ctx := context.Background()
	// Two clients on one store stand for two processes.
	a, _ := lock.Open("memory", "example-election")
	b, _ := lock.Open("memory", "example-election")
	defer a.Close()
	defer b.Close()
	ea, _ := a.Election("scheduler", lock.WithTTL(5*time.Second))
	eb, _ := b.Election("scheduler", lock.WithTTL(5*time.Second))

	// a leads; everyone can read who leads, and with what token.
	term, err := ea.Campaign(ctx, "10.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	ld, _, _ := eb.Leader(ctx)
	fmt.Println("leader", ld.Value, "token", ld.Token)

	// b campaigns, and is elected when a resigns.
	elected := make(chan *lock.Term)
	go func() {
		t, err := eb.Campaign(ctx, "10.0.0.2:8080")
		if err != nil {
			log.Fatal(err)
		}
		elected <- t
	}()
	time.Sleep(20 * time.Millisecond)
	term.Resign(ctx)
	next := <-elected
	defer next.Resign(ctx)
	tok, _ := next.Token()
	fmt.Println("leader", next.Value(), "token", tok)
	// Output:
	// leader 10.0.0.1:8080 token 1
	// leader 10.0.0.2:8080 token 2
}
