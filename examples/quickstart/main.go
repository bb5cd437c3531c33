// Command quickstart shows the library's main job on the in-memory driver:
// several workers, each with its own client, contend for one key; each
// holds the lock in turn, gets a fencing token, and writes to a resource
// that refuses stale tokens.
//
// Run it with `make demo` or `go run ./examples/quickstart`. To run it on
// another backend, change the driver import and the DSN.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/memory" // registers "memory"
	"github.com/distlock/lock/fencing"
)

// ledger is the protected resource. It remembers the newest token it has
// seen and refuses older ones: the fencing check that makes a stale holder
// (one whose lock ran out during a pause) harmless.
type ledger struct {
	mu      sync.Mutex
	newest  fencing.Token
	entries []string
}

func (l *ledger) write(tok fencing.Token, entry string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !tok.Newer(l.newest) {
		return fmt.Errorf("refused %q: token %v is not newer than %v", entry, tok, l.newest)
	}
	l.newest = tok
	l.entries = append(l.entries, entry)
	return nil
}

func main() {
	log.SetFlags(0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const driverName, dsn = "memory", "quickstart"
	fmt.Printf("drivers registered: %v; using %q\n\n", lock.Drivers(), driverName)

	var res ledger
	var wg sync.WaitGroup
	for w := 1; w <= 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := lock.Open(driverName, dsn)
			if err != nil {
				log.Fatal(err)
			}
			defer c.Close()
			for i := 1; i <= 2; i++ {
				err := c.Do(ctx, "ledger", func(ctx context.Context) error {
					tok, _ := lock.FromContext(ctx).Token()
					fmt.Printf("worker %d holds the lock (token %v)\n", w, tok)
					time.Sleep(20 * time.Millisecond) // the protected work
					return res.write(tok, fmt.Sprintf("worker %d, round %d", w, i))
				}, lock.WithTTL(2*time.Second))
				if err != nil {
					log.Fatal(err)
				}
			}
		}()
	}
	wg.Wait()

	// A stale holder: its lease runs out while it is paused, someone else
	// takes the lock, and its late write is refused by the fencing check.
	fmt.Println("\na holder pauses past its TTL:")
	c, err := lock.Open(driverName, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	stale, err := c.Acquire(ctx, "ledger", lock.WithTTL(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	staleTok, _ := stale.Token()
	time.Sleep(100 * time.Millisecond) // a GC pause, a slow network...
	fresh, err := c.Acquire(ctx, "ledger")
	if err != nil {
		log.Fatal(err)
	}
	freshTok, _ := fresh.Token()
	fmt.Println("  new holder writes:", orOK(res.write(freshTok, "new holder")))
	fmt.Println("  stale holder writes:", orOK(res.write(staleTok, "stale holder")))
	if err := stale.Release(ctx); errors.Is(err, lock.ErrNotHeld) {
		fmt.Println("  stale holder's release:", err)
	}
	fresh.Release(ctx)

	fmt.Printf("\nledger: %d entries, newest token %v\n", len(res.entries), res.newest)
	s := c.Stats()
	fmt.Printf("this client's stats: %+v\n", s)
	if len(res.entries) != 7 {
		os.Exit(1)
	}
}

func orOK(err error) string {
	if err != nil {
		return err.Error()
	}
	return "ok"
}
