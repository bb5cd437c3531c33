package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// Harness is what a driver hands to [Run].
type Harness struct {
	// NewClient opens a new client on the backend under test. All clients
	// of one Run must share one backend, so that they contend with each
	// other. The suite closes the clients it is given. It must be safe to
	// call from parallel tests.
	NewClient func(t *testing.T) *lock.Client

	// Fencing says the driver issues fencing tokens.
	Fencing bool

	// Extend says the driver can extend leases.
	Extend bool

	// Wakeups says the driver announces releases, so that a waiter wakes
	// as soon as the key it waits for is released.
	Wakeups bool

	// TTL is the short lease the suite uses where it waits for expiry. It
	// must be well above the backend's round trip. Zero means 250ms.
	TTL time.Duration

	// NewConn, if set, opens a raw driver connection to the same backend,
	// which the suite closes. It lets the suite check the promises that the
	// core's own checks hide from the portable API. The driver must refuse
	// to extend a lease for a value that does not hold it, and must never
	// revive an expired lease.
	NewConn func(t *testing.T) driver.Conn

	// Faults, if set, lets the suite kill, hang and restart the nodes of a
	// quorum driver's backend, and adds the fault cases. A broken minority
	// must neither stop nor slow down acquire and release. A broken
	// majority must make attempts fail within Harness.TTL with an error
	// that does not match lock.ErrNotAcquired. Those attempts must leave
	// nothing held on the other nodes.
	Faults Faults

	// Misconfigured, if set, opens a client on the same backend whose
	// credentials (or identity) the backend refuses. The suite checks that
	// its Acquire ends at once with an error matching
	// lock.ErrMisconfigured, instead of retrying.
	Misconfigured func(t *testing.T) *lock.Client

	// NewScratchConn, if set, opens a raw driver connection on the scratch
	// namespace name, and adds the Drop cases. The suite picks name: 8 to
	// 40 bytes of lowercase letters, digits and '_', starting with a letter.
	// The harness maps it onto the driver's namespace (a table, a
	// collection, a key prefix, a chroot, a bucket), which the connection
	// creates if the driver does. Calls with one name open connections to
	// one namespace. The connection must implement driver.Dropper and
	// driver.Inspector. The suite closes the connections and drops the
	// namespaces.
	NewScratchConn func(t *testing.T, name string) driver.Conn

	// NewDialerClient, if set, opens a client on the same backend whose
	// every connection is dialed by dial, and adds the Dialer cases. Drivers
	// that implement driver.DialerDriver set it. The suite closes the
	// clients it is given. It must be safe to call from parallel tests.
	NewDialerClient func(t *testing.T, dial driver.DialFunc) *lock.Client
}

// CasesEnv names the environment variable that, when set, holds a regular
// expression: Run then runs only the cases whose names it matches, such
// as "^(Election|Semaphore)_". It is for measuring and debugging a family
// of cases on every driver at once; go test's -run cannot, since drivers
// nest the suite at different depths.
const CasesEnv = "DISTLOCK_CONFORMANCE_CASES"

// casesFilter returns the filter of CasesEnv, or nil to run every case.
func casesFilter(t *testing.T) *regexp.Regexp {
	expr := os.Getenv(CasesEnv)
	if expr == "" {
		return nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatalf("conformance: %s: %v", CasesEnv, err)
	}
	return re
}

// Run runs the conformance suite as subtests of t (see [CasesEnv]).
func Run(t *testing.T, h Harness) {
	t.Helper()
	only := casesFilter(t)
	if h.NewClient == nil {
		t.Fatal("conformance: Harness.NewClient is nil")
	}
	if h.TTL == 0 {
		h.TTL = 250 * time.Millisecond
	}
	s := &suite{h: h}
	// Fault cases break the shared backend. So they run first, one at a
	// time, while the parallel cases wait for Run to return.
	for _, c := range s.faultCases() {
		if only == nil || only.MatchString(c.name) {
			t.Run(c.name, c.run)
		}
	}
	cases := []testCase{
		{"AcquireRelease", s.acquireRelease},
		{"TryAcquire_held", s.tryAcquireHeld},
		{"Release_notOwner", s.releaseNotOwner},
		{"Extend_notOwner", s.extendNotOwner},
		{"Expiry_vanishedHolder", s.expiry},
		{"Extend_keepsLock", s.extendKeeps},
		{"Extend_afterExpiry", s.extendAfterExpiry},
		{"Acquire_waitsForRelease", s.acquireWaits},
		{"Acquire_cancelled", s.acquireCancelled},
		{"Do_releases", s.doReleases},
		{"Do_extends", s.doExtends},
		{"Do_cancelsOnLoss", s.doCancelsOnLoss},
		{"BadInput", s.badInput},
		{"Keys_areOpaque", s.keysOpaque},
		{"Values_longest", s.valuesLongest},
		{"Driver_longestValue", s.driverLongestValue},
		{"Tokens_increase", s.tokensIncrease},
		{"Contention_oneKey", s.contentionOneKey},
		{"Contention_manyKeys", s.contentionManyKeys},
		{"Stats", s.stats},
		{"Close", s.close},
		{"Close_letsGo", s.closeLetsGo},
		{"Inspect", s.inspect},
		{"Done_atValidity", s.doneAtValidity},
		{"Done_atRelease", s.doneAtRelease},
		{"Driver_ownership", s.driverOwnership},
		{"Driver_noRevival", s.driverNoRevival},
		{"Driver_transfer", s.driverTransfer},
		{"Driver_transferLease", s.driverTransferLease},
		{"Misconfigured_failsFast", s.misconfigured},
		{"Drop_scratch", s.dropScratch},
		{"Dialer_everyConnection", s.dialerEveryConnection},
		{"Dialer_failing", s.dialerFailing},
	}
	cases = append(cases, s.semaphoreCases()...)
	cases = append(cases, s.electionCases()...)
	for _, c := range cases {
		if only != nil && !only.MatchString(c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

type suite struct{ h Harness }

type testCase struct {
	name string
	run  func(*testing.T)
}

// timeout bounds every wait of a case, so that a broken driver fails a case
// instead of hanging the suite.
const timeout = 20 * time.Second

// limit bounds each case. The bound is timeout, or 40 TTLs for a backend
// slow enough to need a long TTL.
func (s *suite) limit() time.Duration { return max(timeout, 40*s.h.TTL) }

// client returns a new client that is closed when the test ends.
func (s *suite) client(t *testing.T) *lock.Client {
	t.Helper()
	c := s.h.NewClient(t)
	if c == nil {
		t.Fatal("conformance: Harness.NewClient returned nil")
	}
	s.ready(t, c)
	return c
}

// ready closes c when the test ends, logs its warnings to the test, and
// waits until it has connected.
func (s *suite) ready(t *testing.T, c *lock.Client) {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	c.SetLogger(slog.New(slog.NewTextHandler(t.Output(), nil)))
	// Connect now, so that no case's timing includes a first connection.
	// This is a readiness check, not a test. A loaded machine may need a
	// few tries.
	ctx, cancel := context.WithTimeout(t.Context(), s.limit())
	defer cancel()
	for {
		err := c.Ping(ctx)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("Ping of a new client: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// key returns a key no other test uses, even on a shared backend.
func key(t *testing.T, suffix string) string {
	var b [6]byte
	rand.Read(b[:])
	return "conformance/" + hex.EncodeToString(b[:]) + "/" + t.Name() + suffix
}

func (s *suite) ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), s.limit())
	t.Cleanup(cancel)
	return ctx
}

func mustAcquire(t *testing.T, ctx context.Context, c *lock.Client, key string, opts ...lock.Option) *lock.Lock {
	t.Helper()
	l, err := c.TryAcquire(ctx, key, opts...)
	if err != nil {
		t.Fatalf("TryAcquire(%q): %v", key, err)
	}
	return l
}

// assertHeld checks that key cannot be taken through c.
func assertHeld(t *testing.T, ctx context.Context, c *lock.Client, key, why string) {
	t.Helper()
	l, err := c.TryAcquire(ctx, key)
	if err == nil {
		l.Release(ctx)
		t.Fatalf("TryAcquire(%q) succeeded, but the key should be held: %s", key, why)
	}
	if !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(%q) = %v, want an error matching ErrNotAcquired (%s)", key, err, why)
	}
}

// assertFree checks that key can be taken through c, and gives it back.
func assertFree(t *testing.T, ctx context.Context, c *lock.Client, key, why string) {
	t.Helper()
	l, err := c.TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("TryAcquire(%q) = %v, but the key should be free: %s", key, err, why)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release(%q): %v", key, err)
	}
}
