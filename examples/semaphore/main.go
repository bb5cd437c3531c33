// Command semaphore shows a pool of workers sharing 3 permits to an
// external API that allows 3 calls at once. Each worker has a client of
// its own, as separate processes would, and calls the API only while it
// holds a permit of the semaphore "partner-api". The API counts the calls
// in flight and refuses one over its limit (429, say). With the
// semaphore, none is refused.
//
//	go run ./examples/semaphore                     # the memory driver, one process
//	go run ./examples/semaphore -driver postgres -dsn 'postgres://postgres@127.0.0.1:15432/distlock?sslmode=disable'
//
// On a shared backend, run it in several terminals at once: the workers
// of every process share the same 3 permits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"  // registers "goredis"
	_ "github.com/distlock/lock/drivers/memory"   // registers "memory"
	_ "github.com/distlock/lock/drivers/postgres" // registers "postgres"
)

// api is the external API: it takes limit calls at once, and refuses more.
type api struct {
	limit int

	mu       sync.Mutex
	inFlight int
	most     int
	served   int
	refused  int
}

var errTooMany = errors.New("429 too many requests")

// call takes d to serve one call, or refuses it at once.
func (a *api) call(d time.Duration) error {
	a.mu.Lock()
	if a.inFlight == a.limit {
		a.refused++
		a.mu.Unlock()
		return errTooMany
	}
	a.inFlight++
	a.most = max(a.most, a.inFlight)
	a.mu.Unlock()
	time.Sleep(d)
	a.mu.Lock()
	a.inFlight--
	a.served++
	a.mu.Unlock()
	return nil
}

func main() {
	driver := flag.String("driver", "memory", "the lock driver")
	dsn := flag.String("dsn", "semaphore-example", "the driver's DSN")
	workers := flag.Int("workers", 8, "workers, each with a client of its own")
	calls := flag.Int("calls", 4, "calls per worker")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *driver, *dsn, *workers, *calls); err != nil {
		log.Fatal(err)
	}
}

// run runs the pool: workers workers, each making calls calls to an API
// that takes 3 at once, each call under a permit.
func run(ctx context.Context, out io.Writer, driver, dsn string, workers, calls int) error {
	const permits = 3
	partner := &api{limit: permits}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		c, err := lock.Open(driver, dsn)
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := c.Semaphore("partner-api", permits, lock.WithTTL(10*time.Second))
		if err != nil {
			return err
		}
		wg.Go(func() {
			for range calls {
				// Do holds a permit while the call runs, and keeps it alive.
				err := s.Do(ctx, func(ctx context.Context) error {
					return partner.call(20 * time.Millisecond)
				})
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(<-errs); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d calls served, %d refused, at most %d in flight (the API allows %d)\n",
		partner.served, partner.refused, partner.most, permits)
	return nil
}
