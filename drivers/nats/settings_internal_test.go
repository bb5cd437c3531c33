package nats

import (
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/nats-io/nats.go/jetstream"
)

// TestJudge_unfitBuckets checks the findings on buckets the test cluster
// never has: a refusal for what cannot serve locks, warnings for what is
// weaker than documented.
func TestJudge_unfitBuckets(t *testing.T) {
	fit := jetstream.StreamConfig{
		AllowMsgTTL: true, AllowRollup: true, Replicas: 3, Storage: jetstream.FileStorage,
		SubjectDeleteMarkerTTL: time.Minute, FirstSeq: clockFloor,
	}
	cfg := Config{}.withDefaults()
	for _, c := range []struct {
		name  string
		edit  func(*jetstream.StreamConfig)
		rules []string
		sev   driver.Severity
	}{
		{"fit", func(*jetstream.StreamConfig) {}, nil, 0},
		{"noKeyTTL", func(sc *jetstream.StreamConfig) { sc.AllowMsgTTL = false }, []string{"nats-key-ttl"}, driver.Error},
		{"bucketTTL", func(sc *jetstream.StreamConfig) { sc.MaxAge = time.Hour }, []string{"nats-bucket-ttl"}, driver.Error},
		{"noRollup", func(sc *jetstream.StreamConfig) { sc.AllowRollup = false }, []string{"nats-rollup"}, driver.Error},
		// The server seals a stream with AllowRollup off and MaxAge 0.
		{"sealed", func(sc *jetstream.StreamConfig) { sc.Sealed, sc.AllowRollup = true, false }, []string{"nats-sealed"}, driver.Error},
		{"mirror", func(sc *jetstream.StreamConfig) {
			sc.Mirror, sc.AllowMsgTTL = &jetstream.StreamSource{Name: "KV_other"}, false
		}, []string{"nats-mirror"}, driver.Error},
		{"weak", func(sc *jetstream.StreamConfig) {
			sc.Replicas, sc.Storage, sc.SubjectDeleteMarkerTTL, sc.FirstSeq = 1, jetstream.MemoryStorage, 0, 1
		}, []string{"nats-replicas", "nats-memory-storage", "nats-markers", "nats-revisions"}, driver.Warning},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := fit
			c.edit(&sc)
			fs := judge(sc, cfg)
			var rules []string
			for _, f := range fs {
				rules = append(rules, f.Rule)
				if f.Severity != c.sev || f.Problem == "" || f.Fix == "" {
					t.Errorf("finding %+v: want severity %v, a problem and a fix", f, c.sev)
				}
			}
			if len(rules) != len(c.rules) {
				t.Fatalf("rules %q, want %q", rules, c.rules)
			}
			for i := range rules {
				if rules[i] != c.rules[i] {
					t.Errorf("rules %q, want %q", rules, c.rules)
				}
			}
		})
	}
}
