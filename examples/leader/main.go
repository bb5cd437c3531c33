// Command leader runs a leader election with lock.Election. Several
// candidates, each with a client of its own as separate processes would
// have, loop on e.Lead(ctx, "candidate-N", lead): the one elected leads,
// and does its work until its context is cancelled (the term was lost, or
// its client closed) or its term ends. Lead then resigns, and another
// candidate is elected. Everyone can read the leader's value and token with
// e.Leader, and follow the changes with e.Observe; the watcher prints the
// leader as the election reports it.
//
// The program watches the terms and ends each one in turn in one of two
// ways: the leader of an odd term crashes halfway through it (its client is
// closed, which releases the lock, and it campaigns no more); the leader of
// an even term returns when its term ends and rests before campaigning
// again. Each term prints its leader and fencing token, and the program
// fails if leadership did not move or tokens did not increase.
//
//	go run ./examples/leader                 # memory, 3 candidates, 4 terms
//	go run ./examples/leader -driver postgres -dsn 'postgres://postgres@127.0.0.1:15432/distlock?sslmode=disable'
//	go run ./examples/leader -driver goredis -dsn 'redis://127.0.0.1:7001?fencing=true,redis://127.0.0.1:7002,redis://127.0.0.1:7003,redis://127.0.0.1:7004,redis://127.0.0.1:7005'
//
// The flags default to $DISTLOCK_DRIVER and $DISTLOCK_DSN, and else to the
// memory driver. Runs that share a backend and a key are one election.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"
	_ "github.com/distlock/lock/drivers/memory"
	_ "github.com/distlock/lock/drivers/mongodb"
	_ "github.com/distlock/lock/drivers/postgres"
	_ "github.com/distlock/lock/drivers/redigo"
)

// config is one election's settings.
type config struct {
	Key        string        // the election's name
	Candidates int           // how many candidates campaign
	Terms      int           // how many terms the program watches before it ends
	TTL        time.Duration // the lock's TTL; a term lasts three of them
}

// term is how long a leader leads before it steps down: three TTLs, so
// that only the term's extensions keep it to the end.
func (cfg config) term() time.Duration { return 3 * cfg.TTL }

// rest is how long a candidate that stepped down waits before it
// campaigns again, so that another candidate takes over.
func (cfg config) rest() time.Duration { return 2 * cfg.TTL }

func main() {
	driverName := flag.String("driver", envOr("DISTLOCK_DRIVER", "memory"), "the lock driver ($DISTLOCK_DRIVER): "+strings.Join(lock.Drivers(), ", "))
	dsn := flag.String("dsn", os.Getenv("DISTLOCK_DSN"), "the driver's DSN ($DISTLOCK_DSN; for memory, a store name)")
	var cfg config
	flag.StringVar(&cfg.Key, "key", "leader", "the election's name")
	flag.IntVar(&cfg.Candidates, "candidates", 3, "how many candidates campaign")
	flag.IntVar(&cfg.Terms, "terms", 4, "how many terms to watch; odd terms end in a crash")
	flag.DurationVar(&cfg.TTL, "ttl", 500*time.Millisecond, "the lock's TTL; a term lasts three of them")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *driverName, *dsn, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "leader:", err)
		os.Exit(1)
	}
}

// envOr returns the environment variable name, or def if it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run starts the candidates, watches cfg.Terms terms, then stops every
// candidate and closes their clients.
func run(ctx context.Context, w io.Writer, driverName, dsn string, cfg config) error {
	if crashes := (cfg.Terms + 1) / 2; cfg.Terms < 1 || crashes >= cfg.Candidates {
		return fmt.Errorf("%d terms crash %d leaders: that needs more than %d candidates", cfg.Terms, crashes, cfg.Candidates)
	}
	clients := make([]*lock.Client, cfg.Candidates)
	for i := range clients {
		// The client's defaults apply to each term: the TTL, and polling
		// often enough that a free key is noticed quickly on drivers that
		// do not announce releases.
		c, err := lock.Open(driverName, dsn, lock.WithTTL(cfg.TTL), lock.WithRetry(lock.FixedDelay(cfg.TTL/4)))
		if err != nil {
			return err
		}
		defer c.Close()
		clients[i] = c
	}
	fmt.Fprintf(w, "%d candidates campaign for %q on %s; a term lasts %v (TTL %v)\n", cfg.Candidates, cfg.Key, driverName, cfg.term(), cfg.TTL)

	shutdown, stop := context.WithCancel(ctx)
	defer stop()
	events := make(chan event, cfg.Candidates)
	done := make(chan struct{})
	go func() {
		defer close(done)
		campaignAll(shutdown, clients, events, cfg)
	}()
	err := watch(ctx, w, clients, events, cfg)
	stop()
	<-done
	fmt.Fprintln(w, "the program ends: every candidate stops campaigning")
	return err
}
