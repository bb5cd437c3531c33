package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/nats-io/nats.go/jetstream"
)

// defaultMarkerTTL is how long a bucket the driver creates keeps the
// markers of expired keys, and how long release markers stay: a waiter
// that reads a key within it learns its last revision in one read.
const defaultMarkerTTL = time.Minute

// clockFloor is below every first revision of a bucket the driver creates
// (microseconds since 1970 in 2001); a bucket whose revisions start below
// it was made otherwise.
const clockFloor = 1_000_000_000_000_000

// open checks the server's version, creates the bucket unless it exists
// (or the configuration forbids it), and checks it.
func (c *conn) open(ctx context.Context) error {
	if err := checkVersion(c.nc.ConnectedServerVersion()); err != nil {
		return err
	}
	if err := c.check(ctx, !c.cfg.NoCreate); err != nil {
		return err
	}
	if c.cfg.Monitor != "" {
		if f := c.checkFsync(ctx); f != nil {
			c.cfg.logger().Warn("nats: "+f.Problem+"; "+f.Fix, "monitor", c.cfg.Monitor)
		}
	}
	return nil
}

// checkVersion refuses a server older than 2.11, which has no per-message
// TTLs.
func checkVersion(v string) error {
	major, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%w: the server's version %q is not a version", driver.ErrMisconfigured, v)
	}
	if ma < 2 || ma == 2 && mi < 11 {
		return fmt.Errorf("%w: the server is nats-server %s; the driver needs 2.11 or newer, for TTLs per key", driver.ErrMisconfigured, v)
	}
	return nil
}

// check reads the bucket's stream at its leader, creating it first if
// create and it does not exist, and judges its configuration: it refuses
// a bucket with an error finding, and logs the warnings.
func (c *conn) check(ctx context.Context, create bool) error {
	sc, err := c.streamConfig(ctx, create)
	if err != nil {
		return err
	}
	fs := judge(sc, c.cfg)
	for _, f := range fs {
		if f.Severity == driver.Error {
			return fmt.Errorf("%w: bucket %s: %s; %s", errRefused, c.cfg.Bucket, f.Problem, f.Fix)
		}
	}
	if ttl := sc.SubjectDeleteMarkerTTL; ttl > 0 {
		c.markerTTL = max(ttl, time.Second)
	}
	for _, f := range fs {
		c.cfg.logger().Warn("nats: bucket "+c.cfg.Bucket+": "+f.Problem+"; "+f.Fix, "bucket", c.cfg.Bucket)
	}
	return nil
}

// streamConfig reads the configuration of the bucket's stream at its
// leader, creating the stream first if create and it does not exist.
func (c *conn) streamConfig(ctx context.Context, create bool) (jetstream.StreamConfig, error) {
	s, err := c.readStream(ctx)
	if errors.Is(err, jetstream.ErrStreamNotFound) && create {
		s, err = c.create(ctx)
	}
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return jetstream.StreamConfig{}, fmt.Errorf("%w: the bucket %s does not exist, and the driver may not create it", driver.ErrMisconfigured, c.cfg.Bucket)
	case err != nil:
		return jetstream.StreamConfig{}, err
	}
	return s.CachedInfo().Config, nil
}

// judge returns what makes the configuration of a bucket's stream unfit
// for locks (errors), or weaker than documented (warnings).
func judge(sc jetstream.StreamConfig, cfg Config) []driver.Finding {
	refuse := func(rule, problem, fix string) []driver.Finding {
		return []driver.Finding{{Severity: driver.Error, Rule: rule, Problem: problem, Fix: fix}}
	}
	// Sealed and Mirror come first: sealing turns AllowRollup off, and a
	// mirror may lack TTLs, which would name the wrong rule.
	switch {
	case sc.Sealed:
		return refuse("nats-sealed", "the bucket is sealed", "use another bucket")
	case sc.Mirror != nil:
		return refuse("nats-mirror", "the bucket is a mirror, which takes no writes", "use the bucket it mirrors")
	case !sc.AllowMsgTTL:
		return refuse("nats-key-ttl", "the bucket has no TTLs per key, so a lock whose holder vanished would never expire",
			"create it with LimitMarkerTTL set, or let the driver create it")
	case sc.MaxAge > 0:
		return refuse("nats-bucket-ttl", fmt.Sprintf("the bucket's TTL (%v) would end locks before their own TTL", sc.MaxAge),
			"use a bucket without one")
	case !sc.AllowRollup:
		return refuse("nats-rollup", "the stream does not allow rollups, which releases use: it is not a KV bucket",
			"let the driver create the bucket")
	}
	var fs []driver.Finding
	warn := func(rule, problem, fix string) {
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: rule, Problem: problem, Fix: fix})
	}
	if sc.Replicas < cfg.Replicas {
		warn("nats-replicas", fmt.Sprintf("%d replicas, fewer than the %d asked for: the loss of a server can lose locks or stop them", sc.Replicas, cfg.Replicas),
			fmt.Sprintf("make the bucket with %d replicas", cfg.Replicas))
	}
	if sc.Storage == jetstream.MemoryStorage {
		warn("nats-memory-storage", "memory storage: a restart of its servers forgets every lock, and tokens start again from its first revision",
			"make the bucket with file storage")
	}
	if sc.SubjectDeleteMarkerTTL == 0 {
		warn("nats-markers", "no LimitMarkerTTL: waiters are not woken when a lock expires, only when it is released",
			"make the bucket with LimitMarkerTTL set")
	}
	if sc.FirstSeq < clockFloor {
		warn("nats-revisions", "revisions that start below the clock: if the bucket is deleted and made again, tokens go back",
			"let the driver create the bucket")
	}
	return fs
}

// create creates the bucket: the stream nats.go's CreateKeyValue makes,
// with TTLs per key, 1 minute markers and one revision per key, whose
// revisions start at the clock's microseconds (see DESIGN.md).
func (c *conn) create(ctx context.Context) (jetstream.Stream, error) {
	sc := jetstream.StreamConfig{
		Name:                   c.stream,
		Subjects:               []string{c.pre + ">"},
		MaxMsgsPerSubject:      1,
		MaxBytes:               -1,
		MaxMsgSize:             -1,
		MaxMsgs:                -1,
		MaxConsumers:           -1,
		Storage:                jetstream.FileStorage,
		Replicas:               c.cfg.Replicas,
		AllowRollup:            true,
		DenyDelete:             true,
		Duplicates:             2 * time.Minute,
		AllowDirect:            true,
		Discard:                jetstream.DiscardNew,
		AllowMsgTTL:            true,
		SubjectDeleteMarkerTTL: defaultMarkerTTL,
		FirstSeq:               uint64(time.Now().UnixMicro()),
	}
	s, err := c.js.CreateStream(ctx, sc)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return c.madeByAnother(ctx)
	}
	return s, err
}

// madeByAnother returns the bucket's stream that another client is
// creating: until its group has formed, the servers answer a create that
// the stream is in use, and a read that it does not exist (or nothing at
// all: see readStream). So it reads again until the stream is there or ctx
// ends. Clients that open a new bucket together, as processes started at
// once do, met both answers; "does not exist" failed them as misconfigured.
func (c *conn) madeByAnother(ctx context.Context) (jetstream.Stream, error) {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		s, err := c.readStream(ctx)
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// readStream reads the bucket's stream, each try within the attempt
// timeout. A read of a stream that another client is creating gets no
// answer at all while its group forms; six clients that opened one new
// bucket together lost four of them to the request timeout that way.
func (c *conn) readStream(ctx context.Context) (jetstream.Stream, error) {
	for {
		attempt, cancel := context.WithTimeout(ctx, c.cfg.AttemptTimeout)
		s, err := c.js.Stream(attempt, c.stream)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return s, err
		}
	}
}

// checkFsync reads the fsync setting of the server at the monitoring URL
// the configuration names, and returns a finding unless it syncs every
// write.
func (c *conn) checkFsync(ctx context.Context) *driver.Finding {
	unread := func(err error) *driver.Finding {
		return &driver.Finding{Severity: driver.Warning, Rule: "nats-fsync", Server: c.cfg.Monitor,
			Problem: "cannot read the fsync setting: " + err.Error(),
			Fix:     "check the monitoring URL, or check sync_interval by hand"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.cfg.Monitor, "/")+"/varz", nil)
	if err != nil {
		return unread(err)
	}
	req.Close = true // one request now and then: keep no idle connection behind
	client := http.DefaultClient
	if c.cfg.dial != nil {
		client = &http.Client{Transport: &http.Transport{DialContext: c.cfg.dial}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return unread(err)
	}
	defer resp.Body.Close()
	var v struct {
		JetStream struct {
			Config struct {
				SyncInterval time.Duration `json:"sync_interval"`
				SyncAlways   bool          `json:"sync_always"`
			} `json:"config"`
		} `json:"jetstream"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return unread(err)
	}
	if sc := v.JetStream.Config; !sc.SyncAlways {
		return &driver.Finding{Severity: driver.Warning, Rule: "nats-fsync", Server: c.cfg.Monitor,
			Problem: fmt.Sprintf("the server fsyncs every %v, not after each write: servers that crash together may forget acknowledged grants, and let a second holder in", sc.SyncInterval),
			Fix:     "set sync_interval: always"}
	}
	return nil
}
