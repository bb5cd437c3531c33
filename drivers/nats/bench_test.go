package nats_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The benchmarks compare the driver, through the lock package, with the
// lock a NATS user writes by hand, on the same cluster and bucket in the
// same run: kv.Create with a TTL per key to acquire, a Delete checked
// against the revision to release, and, to wait, Create again every 1ms
// (as bench's other try-only baselines do).
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release,
//     with drivertest.BenchAcquireRelease (its paired sub-benchmark gives
//     the figure to judge by).
//   - BenchmarkHandoff: 8 goroutines taking turns on one key, each holding
//     it for 1ms, with drivertest.BenchHandoff.

// benchKV returns the bucket of full, which the driver's client made,
// through a connection of its own.
func benchKV(b *testing.B, full string) jetstream.KeyValue {
	b.Helper()
	nc, err := natsgo.Connect(serverURLs(b), natsgo.UserInfo("distlock", "distlock-nats-test-password"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), bucketOf(b, full))
	if err != nil {
		b.Fatal(err)
	}
	return kv
}

// byHand is the hand-written lock's acquisition of key: kv.Create with a
// TTL, tried again every 1ms while the key exists. Create reports a key it
// finds live as ErrKeyExists. For a deleted key it writes again on the
// delete's revision, and a writer that got there first makes that write
// fail its condition (10071, or 10164 while the other write is in
// flight). Right after its own Delete, the read between Create's two
// writes (a direct get, which a follower may answer) can still see the
// deleted value, and report ErrKeyExists.
func byHand(ctx context.Context, kv jetstream.KeyValue, key string) (uint64, error) {
	for {
		rev, err := kv.Create(ctx, key, []byte("holder"), jetstream.KeyTTL(lock.DefaultTTL))
		if !taken(err) {
			return rev, err
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// taken reports whether err is kv.Create's refusal of a key that exists,
// or that another writer took first.
func taken(err error) bool {
	var ae *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) || errors.As(err, &ae) &&
		(ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

func BenchmarkAcquireRelease(b *testing.B) {
	full := dsn(b)
	c := open(b, full)
	kv := benchKV(b, full)
	key := "bench-" + drivertest.RandomHex(4)
	ctx := context.Background()
	drivertest.BenchAcquireRelease(b, c, "kv.Create", func(b *testing.B) {
		rev, err := byHand(ctx, kv, key)
		if err != nil {
			b.Fatal(err)
		}
		if err := kv.Delete(ctx, key, jetstream.LastRevision(rev)); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkHandoff(b *testing.B) {
	full := dsn(b)
	open(b, full) // makes the bucket
	drivertest.BenchHandoff(b, func(b *testing.B) *lock.Client { return open(b, full) }, "kv.Create/retry=1ms", func(b *testing.B) drivertest.Take {
		kv := benchKV(b, full)
		key := "handoff-" + drivertest.RandomHex(4)
		return func(ctx context.Context, g int) (func() error, error) {
			rev, err := byHand(ctx, kv, key)
			if err != nil {
				return nil, err
			}
			return func() error { return kv.Delete(ctx, key, jetstream.LastRevision(rev)) }, nil
		}
	})
}
