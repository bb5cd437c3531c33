package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/memory" // registers "memory"
)

func ExampleOpen() {
	// The driver's import registers it; the DSN says where the backend is.
	// For the memory driver it names a store shared inside the process.
	c, err := lock.Open("memory", "example-open")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx := context.Background()
	l, err := c.Acquire(ctx, "invoice:42", lock.WithTTL(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	tok, ok := l.Token()
	fmt.Println("holding", l.Key(), "with token", tok, ok)
	// Output: holding invoice:42 with token 1 true
}

func ExampleClient_Acquire() {
	ctx := context.Background()
	// Two clients on one store contend like two processes on one backend.
	a, _ := lock.Open("memory", "example-acquire")
	b, _ := lock.Open("memory", "example-acquire")
	defer a.Close()
	defer b.Close()

	first, err := a.Acquire(ctx, "report")
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		fmt.Println("a releases")
		first.Release(ctx)
	}()

	// b waits until a releases (or until its context ends).
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	second, err := b.Acquire(ctx2, "report")
	if err != nil {
		log.Fatal(err)
	}
	defer second.Release(ctx)
	tok, _ := second.Token()
	fmt.Println("b holds it, token", tok)
	// Output:
	// a releases
	// b holds it, token 2
}

func ExampleClient_TryAcquire() {
	ctx := context.Background()
	c, _ := lock.Open("memory", "example-try")
	defer c.Close()

	l, _ := c.TryAcquire(ctx, "nightly-job")
	defer l.Release(ctx)

	// One attempt, no waiting: someone (here, ourselves) holds the key.
	_, err := c.TryAcquire(ctx, "nightly-job")
	fmt.Println(errors.Is(err, lock.ErrNotAcquired))
	fmt.Println(err)
	// Output:
	// true
	// lock: acquire "nightly-job": held by another holder
}

func ExampleClient_Do() {
	ctx := context.Background()
	c, _ := lock.Open("memory", "example-do")
	defer c.Close()

	// Do acquires, keeps extending the lease while fn runs, cancels fn's
	// context if the lock is lost, and releases when fn returns.
	err := c.Do(ctx, "migrate", func(ctx context.Context) error {
		tok, _ := lock.FromContext(ctx).Token()
		// Pass the fencing token with every write, so that the resource
		// can refuse a holder that lost the lock without knowing it.
		fmt.Println("migrating with token", tok)
		return nil
	}, lock.WithTTL(5*time.Second))
	fmt.Println("done:", err)
	// Output:
	// migrating with token 1
	// done: <nil>
}

func ExampleWithRetry() {
	ctx := context.Background()
	c, _ := lock.Open("memory", "example-retry")
	defer c.Close()
	held, _ := c.TryAcquire(ctx, "k")
	defer held.Release(ctx)

	// Three attempts, 10ms apart (with jitter), then give up.
	_, err := c.Acquire(ctx, "k", lock.WithRetry(lock.LimitAttempts(lock.FixedDelay(10*time.Millisecond), 3)))
	fmt.Println(errors.Is(err, lock.ErrNotAcquired))
	// Output: true
}

func ExampleLock_Done() {
	c, err := lock.Open("memory", "example-done")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.Acquire(ctx, "job", lock.WithTTL(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	// Nobody extends it: Done is closed once its validity passes.
	<-l.Done()
	fmt.Println("lost:", errors.Is(l.Err(), lock.ErrLost))
	// Output: lost: true
}

func ExampleLock_KeepAlive() {
	c, err := lock.Open("memory", "example-keepalive")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.Acquire(ctx, "job", lock.WithTTL(300*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	stop := l.KeepAlive()
	select {
	case <-l.Done():
		fmt.Println("lost:", l.Err())
	case <-time.After(600 * time.Millisecond): // the work, past the TTL
		fmt.Println("still held after the work")
	}
	stop()
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: still held after the work
}
