package locktest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/locktest"
)

// copyJobs is the code under test: it copies jobs to out while it holds
// the lock "jobs", and stops the moment the lock is lost.
func copyJobs(ctx context.Context, c *lock.Client, jobs <-chan string, out func(string)) error {
	return c.Do(ctx, "jobs", func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case j := <-jobs:
				out(j)
			}
		}
	})
}

// A worker whose writes stop the moment its lock is lost.
func Example() {
	b := locktest.New()
	c := lock.OpenConnector(b)
	defer c.Close()

	jobs := make(chan string)
	stopped := make(chan error)
	go func() {
		stopped <- copyJobs(context.Background(), c, jobs, func(j string) { fmt.Println("copied", j) })
	}()
	jobs <- "a"
	jobs <- "b"
	b.Lose("jobs")
	err := <-stopped
	fmt.Println("stopped:", errors.Is(err, lock.ErrLost))
	// Output:
	// copied a
	// copied b
	// stopped: true
}

func ExampleBackend_Lose() {
	ctx := context.Background()
	b := locktest.New()
	c := lock.OpenConnector(b)
	defer c.Close()

	l, err := c.Acquire(ctx, "invoice:42", lock.WithTTL(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	b.Lose("invoice:42")
	<-l.Done()
	fmt.Println("Err:", errors.Is(l.Err(), lock.ErrLost))
	fmt.Println("Release:", errors.Is(l.Release(ctx), lock.ErrNotHeld))
	// Output:
	// Err: true
	// Release: true
}

func ExampleBackend_RefuseExtensions() {
	ctx := context.Background()
	b := locktest.New()
	c := lock.OpenConnector(b)
	defer c.Close()

	l, err := c.Acquire(ctx, "invoice:42")
	if err != nil {
		log.Fatal(err)
	}
	b.RefuseExtensions(1)
	err = l.Extend(ctx, 10*time.Second)
	fmt.Println("Extend:", errors.Is(err, lock.ErrNotHeld))
	fmt.Println("Err:", errors.Is(l.Err(), lock.ErrLost))
	// Output:
	// Extend: true
	// Err: true
}

func ExampleBackend_FailExtensions() {
	ctx := context.Background()
	b := locktest.New()
	c := lock.OpenConnector(b)
	defer c.Close()

	l, err := c.Acquire(ctx, "invoice:42")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	b.FailExtensions(1, nil)
	fmt.Println("first:", l.Extend(ctx, 10*time.Second) != nil)
	fmt.Println("second:", l.Extend(ctx, 10*time.Second))
	fmt.Println("still held:", l.Err() == nil)
	// Output:
	// first: true
	// second: <nil>
	// still held: true
}

func ExampleBackend_Unavailable() {
	ctx := context.Background()
	b := locktest.New()
	c := lock.OpenConnector(b)
	defer c.Close()

	b.Unavailable(50 * time.Millisecond)
	_, err := c.TryAcquire(ctx, "invoice:42")
	fmt.Println("TryAcquire:", errors.Is(err, lock.ErrUnavailable))

	// A waiting Acquire keeps trying, and takes the key once the backend is back.
	l, err := c.Acquire(ctx, "invoice:42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("Acquire: holding", l.Key())
	l.Release(ctx)
	// Output:
	// TryAcquire: true
	// Acquire: holding invoice:42
}

func ExampleBackend_Supersede() {
	ctx := context.Background()
	b := locktest.New()
	c := lock.OpenConnector(b)
	defer c.Close()
	guard := fencing.NewMemoryGuard()

	// The code under test: a write of report.csv under the lock, through the guard.
	writeReport := func() error {
		return c.Do(ctx, "report", func(ctx context.Context) error {
			tok, _ := lock.FromContext(ctx).Token()
			return guard.Do(ctx, "report.csv", tok, func(context.Context) error { return nil })
		})
	}

	// A newer holder wrote report.csv while the next holder was paused.
	if err := b.Supersede(ctx, "report", guard, "report.csv"); err != nil {
		log.Fatal(err)
	}
	err := writeReport()
	fmt.Println("stale:", errors.Is(err, fencing.ErrStale))
	fmt.Println("next:", writeReport())
	// Output:
	// stale: true
	// next: <nil>
}
