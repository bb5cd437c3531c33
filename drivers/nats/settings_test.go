package nats_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestCheckSettings finds nothing wrong with a bucket the driver made on
// the test cluster, whose servers fsync every write: the settings check
// reads the fsync setting where the DSN names a monitoring endpoint.
func TestCheckSettings(t *testing.T) {
	for name, full := range map[string]string{
		"bucket":         dsn(t),
		"bucketAndFsync": dsn(t, "monitor", drivertest.Lookup(t, "DISTLOCK_NATS_MONITOR")),
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			fs, err := open(t, full).CheckSettings(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				t.Errorf("finding on the test cluster: %v", f)
			}
		})
	}
}

// TestCheckSettings_defaultSyncInterval warns of a server that keeps
// JetStream's default sync interval (an fsync every two minutes): a
// server of the test's own, one node, whose bucket is otherwise fit.
func TestCheckSettings_defaultSyncInterval(t *testing.T) {
	drivertest.OwnServers(t)
	srv := startServer(t, "")
	full := srv.url + "?" + drivertest.Query("bucket", "distlock_fsync", "replicas", "1", "monitor", srv.monitor,
		"attempt_timeout", timeouts.Attempt.String(), "request_timeout", timeouts.Request.String())
	fs, err := open(t, full).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := drivertest.Findings(t, fs), []string{"warning nats-fsync"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// TestCheckSettings_brokenBuckets breaks, on the test cluster, a bucket
// that a client opened fit: it seals the bucket's stream, or replaces it
// by one made otherwise. The client's settings check reports the rule
// broken, and a new connection is refused (ErrMisconfigured) for an error
// and opened for a warning.
func TestCheckSettings_brokenBuckets(t *testing.T) {
	js := jetStream(t)
	for _, c := range []struct {
		name string
		// edit breaks the configuration the driver made; seal updates the
		// stream with it, where the others replace it.
		edit func(t *testing.T, sc *jetstream.StreamConfig)
		seal bool
		want []string
	}{
		{"sealed", func(_ *testing.T, sc *jetstream.StreamConfig) { sc.Sealed = true }, true, []string{"error nats-sealed"}},
		{"mirror", func(t *testing.T, sc *jetstream.StreamConfig) {
			source := bucketOf(t, dsn(t))
			open(t, dsn(t, "bucket", source))
			// A mirror takes no markers: the server refuses them.
			sc.Subjects, sc.FirstSeq, sc.SubjectDeleteMarkerTTL = nil, 0, 0
			sc.Mirror, sc.MirrorDirect = &jetstream.StreamSource{Name: "KV_" + source}, true
		}, false, []string{"error nats-mirror"}},
		{"noKeyTTL", func(_ *testing.T, sc *jetstream.StreamConfig) {
			sc.AllowMsgTTL, sc.SubjectDeleteMarkerTTL = false, 0
		}, false, []string{"error nats-key-ttl"}},
		{"bucketTTL", func(_ *testing.T, sc *jetstream.StreamConfig) { sc.MaxAge = time.Hour }, false, []string{"error nats-bucket-ttl"}},
		{"noRollup", func(_ *testing.T, sc *jetstream.StreamConfig) {
			sc.AllowRollup, sc.SubjectDeleteMarkerTTL = false, 0
		}, false, []string{"error nats-rollup"}},
		{"oneReplica", func(_ *testing.T, sc *jetstream.StreamConfig) { sc.Replicas = 1 }, false, []string{"warning nats-replicas"}},
		{"memoryStorage", func(_ *testing.T, sc *jetstream.StreamConfig) { sc.Storage = jetstream.MemoryStorage }, false, []string{"warning nats-memory-storage"}},
		{"noMarkers", func(_ *testing.T, sc *jetstream.StreamConfig) { sc.SubjectDeleteMarkerTTL = 0 }, false, []string{"warning nats-markers"}},
		{"revisionsFromOne", func(_ *testing.T, sc *jetstream.StreamConfig) { sc.FirstSeq = 0 }, false, []string{"warning nats-revisions"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			full := dsn(t)
			cl := open(t, full)
			stream := "KV_" + bucketOf(t, full)
			// A refused bucket is not dropped by dropBucket, which connects.
			t.Cleanup(func() { deleteStream(t, js, stream) })
			ctx := drivertest.Context(t, 20*time.Second)
			s, err := js.Stream(ctx, stream)
			if err != nil {
				t.Fatal(err)
			}
			sc := s.CachedInfo().Config
			c.edit(t, &sc)
			if c.seal {
				_, err = js.UpdateStream(ctx, sc)
			} else if err = js.DeleteStream(ctx, stream); err == nil {
				_, err = js.CreateStream(ctx, sc)
			}
			if err != nil {
				t.Fatalf("breaking the bucket: %v", err)
			}

			fs, err := cl.CheckSettings(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := drivertest.Findings(t, fs); !slices.Equal(got, c.want) {
				t.Errorf("findings %q, want %q", got, c.want)
			}

			refused := fs[0].Severity == driver.Error
			cn, err := nats.Driver{}.OpenConnector(drivertest.WithParams(full, "create", "false"))
			if err != nil {
				t.Fatal(err)
			}
			conn, err := cn.Connect(ctx)
			switch {
			case refused && !errors.Is(err, driver.ErrMisconfigured):
				t.Errorf("Connect: %v, want it refused with ErrMisconfigured", err)
			case !refused && err != nil:
				t.Errorf("Connect: %v, want a connection, for a warning", err)
			}
			if err == nil {
				conn.Close()
			}
		})
	}
}

// jetStream returns a JetStream context on the test cluster, closed when
// the test ends.
func jetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc, err := natsgo.Connect(serverURLs(t), natsgo.UserInfo("distlock", "distlock-nats-test-password"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// deleteStream deletes the stream name, if it is there.
func deleteStream(t *testing.T, js jetstream.JetStream, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("deleting the stream %s: %v", name, err)
	}
}
