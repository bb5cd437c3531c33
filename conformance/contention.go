package conformance

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// contend runs goroutines over clients, each acquiring keys in turn n times
// and holding each for hold, and checks the history.
func (s *suite) contend(t *testing.T, keys []string, goroutines, n int) {
	ctx := s.ctxFor(t)
	clients := []*lock.Client{s.client(t), s.client(t), s.client(t), s.client(t)}
	var h History
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[g%len(clients)]
			for i := 0; i < n; i++ {
				k := keys[(g+i)%len(keys)]
				l, err := c.Acquire(ctx, k, lock.WithTTL(10*time.Second), lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond)))
				if err != nil {
					errs <- err
					return
				}
				got := time.Now()
				if !got.Before(l.ValidUntil()) {
					errs <- fmt.Errorf("Acquire returned a lock whose validity had passed %v before", got.Sub(l.ValidUntil()))
					return
				}
				time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				h.Hold(l, got)
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("contender: %v", err)
	}
	if err := h.Check(s.h.Fencing); err != nil {
		t.Error(err)
	}
	if want := goroutines * n; h.Len() != want && !t.Failed() {
		t.Errorf("%d holdings recorded, want %d", h.Len(), want)
	}
}

func (s *suite) contentionOneKey(t *testing.T) {
	s.contend(t, []string{key(t, "")}, 8, 25)
}

func (s *suite) contentionManyKeys(t *testing.T) {
	keys := make([]string, 5)
	for i := range keys {
		keys[i] = key(t, "/"+string(rune('a'+i)))
	}
	s.contend(t, keys, 10, 25)
}
