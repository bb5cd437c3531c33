package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Worker processes contend on the three-node cluster while the nemesis
// hangs and kills nodes (one, or two) and pauses holders past their TTL:
// no overlap, no token regression, no lost write, no key left a TTL after
// the run. And the count of keys left behind sees a leaky variant's.
func TestProcesses(t *testing.T) {
	drivertest.ProcessRuns{
		Driver: nats.Driver{},
		DSN: func(t testing.TB, name string) string {
			return server(t) + "?" + drivertest.Query("bucket", name, "attempt_timeout", timeouts.Attempt.String(), "request_timeout", timeouts.Request.String())
		},
		Settings: conformance.Processes{
			Duration: conformance.SoakDuration(8 * time.Second), TTL: timeouts.TTL, Fenced: true,
			Majority: true, PauseHolders: true,
		},
		Leftovers: liveKeys,
		Nemesis: func(t *testing.T, _ string, p *conformance.Processes) {
			c := theCluster(t)
			c.healthy(t)
			p.Faults = c
		},
		After: func(t *testing.T) { theCluster(t).healthy(t) },
	}.Run(t)
}

// liveKeys returns a count of the live keys of the bucket name, which is
// deleted when the test ends. Every key there is a lock.
func liveKeys(t *testing.T, name string) func(*testing.T) int {
	t.Cleanup(func() { dropBucket(t, server(t)+"?bucket="+name) })
	nc, err := natsgo.Connect(serverURLs(t), natsgo.UserInfo("distlock", "distlock-nats-test-password"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T) int {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, name)
		if err != nil {
			t.Errorf("counting leftovers: %v", err)
			return 0
		}
		keys, err := kv.ListKeys(ctx)
		if err != nil {
			t.Errorf("counting leftovers: %v", err)
			return 0
		}
		n := 0
		for range keys.Keys() {
			n++
		}
		return n
	}
}
