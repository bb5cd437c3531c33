package conformance_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// A checker that cannot fail proves nothing. Each broken variant below is
// the memory driver with one promise taken away; the suite, run on it in a
// child process, must fail, and fail in the case that guards that promise.

// variants maps a broken driver's name to the cases that must catch it.
// The intact variants are the controls: the wrappers alone break nothing.
var variants = map[string]struct {
	harness func(t *testing.T) conformance.Harness
	caught  []string
}{
	"intact": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return base{in} }),
	},
	"noMutualExclusion": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return noExclusion{base{in}} }),
		caught:  []string{"TryAcquire_held", "Contention_oneKey", "Contention_manyKeys"},
	},
	"neverExpires": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return neverExpires{base{in}} }),
		caught:  []string{"Expiry_vanishedHolder", "Driver_ownership"},
	},
	"revivesExpired": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return revivesExpired{base{in}} }),
		caught:  []string{"Driver_noRevival"},
	},
	"releasesAnyone": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return releasesAnyone{base{in}} }),
		caught:  []string{"Release_notOwner"},
	},
	"extendsAnyone": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return extendsAnyone{base{in}} }),
		caught:  []string{"Driver_ownership"},
	},
	"staleTokens": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return staleTokens{base{in}} }),
		caught:  []string{"Tokens_increase", "Contention_oneKey"},
	},
	"transfersAnyone": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return transfersAnyone{base{in}} }),
		caught:  []string{"Driver_transfer"},
	},
	"transfersStaleTokens": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return transfersStaleTokens{base{in}} }),
		caught:  []string{"Driver_transfer"},
	},
	"silentReleases": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return silentReleases{base{in}} }),
		caught:  []string{"Acquire_waitsForRelease"},
	},
	"quorumIntact": {
		harness: func(t *testing.T) conformance.Harness { return quorumHarness(t, quorumConfig{nodes: 5}) },
	},
	"quorumOfOne": {
		harness: func(t *testing.T) conformance.Harness { return quorumHarness(t, quorumConfig{nodes: 5, quorum: 1}) },
		caught:  []string{"Faults_majorityKilled", "Faults_majorityHung", "Contention_oneKey"},
	},
	"quorumSlowNodes": {
		harness: func(t *testing.T) conformance.Harness {
			return quorumHarness(t, quorumConfig{nodes: 5, nodeTimeout: 3 * time.Second})
		},
		caught: []string{"Faults_majorityHung"},
	},
	"quorumWaitsForAll": {
		harness: func(t *testing.T) conformance.Harness {
			return quorumHarness(t, quorumConfig{nodes: 5, nodeTimeout: time.Second, waitAll: true})
		},
		caught: []string{"Faults_minorityHung"},
	},
	"quorumHeldWhenDown": {
		harness: func(t *testing.T) conformance.Harness {
			return quorumHarness(t, quorumConfig{nodes: 5, heldWhenDown: true})
		},
		caught: []string{"Faults_majorityKilled", "Faults_majorityHung"},
	},
}

// memoryHarness is the harness of the memory driver with wrap around it.
func memoryHarness(wrap func(driver.Conn) driver.Conn) func(t *testing.T) conformance.Harness {
	return func(t *testing.T) conformance.Harness {
		bc := brokenConnector{memory.New(), wrap}
		return conformance.Harness{
			NewClient: func(t *testing.T) *lock.Client { return lock.OpenConnector(bc) },
			NewConn: func(t *testing.T) driver.Conn {
				c, err := bc.Connect(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
			Fencing: true,
			Extend:  true,
			Wakeups: true,
		}
	}
}

const variantEnv = "DISTLOCK_BROKEN_VARIANT"

// TestBrokenDriver runs the suite on the variant named by $DISTLOCK_BROKEN_VARIANT.
// TestSuiteCatchesBrokenDrivers runs it in child processes.
func TestBrokenDriver(t *testing.T) {
	name := os.Getenv(variantEnv)
	if name == "" {
		t.Skip("runs only as a child of TestSuiteCatchesBrokenDrivers")
	}
	v, ok := variants[name]
	if !ok {
		t.Fatalf("unknown variant %q", name)
	}
	conformance.Run(t, v.harness(t))
}

func TestSuiteCatchesBrokenDrivers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite once per broken driver")
	}
	for name, v := range variants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A control runs the whole suite; a broken variant only the
			// cases that must catch it.
			run := "^TestBrokenDriver$"
			if v.caught != nil {
				run += "/^(" + strings.Join(v.caught, "|") + ")$"
			}
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+run, "-test.v", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), variantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if v.caught == nil {
				if err != nil {
					t.Fatalf("the suite failed on the intact driver (%v); output:\n%s", err, tail(out))
				}
				return
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite passed on a driver with %s, or did not run (%v); output:\n%s", name, err, tail(out))
			}
			failed := failedCases(string(out))
			for _, c := range v.caught {
				if !failed[c] {
					t.Errorf("case %s did not catch the %s driver; failed cases: %v", c, name, keys(failed))
				}
			}
		})
	}
}

var failLine = regexp.MustCompile(`--- FAIL: TestBrokenDriver/([^/\s]+)`)

func failedCases(out string) map[string]bool {
	failed := make(map[string]bool)
	for _, m := range failLine.FindAllStringSubmatch(out, -1) {
		failed[m[1]] = true
	}
	return failed
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func tail(out []byte) string {
	s := string(out)
	if len(s) > 4000 {
		s = "..." + s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}

type brokenConnector struct {
	store *memory.Store
	wrap  func(driver.Conn) driver.Conn
}

func (b brokenConnector) Connect(ctx context.Context) (driver.Conn, error) {
	in, err := b.store.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return b.wrap(in), nil
}

// base passes every call through to the memory driver.
type base struct{ in driver.Conn }

func (b base) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return b.in.Acquire(ctx, key, value, ttl)
}
func (b base) Release(ctx context.Context, key, value string) error {
	return b.in.Release(ctx, key, value)
}
func (b base) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	return b.in.(driver.Extender).Extend(ctx, key, value, ttl)
}
func (b base) Watch(ctx context.Context, key string) (driver.Watch, error) {
	return b.in.(driver.Waiter).Watch(ctx, key)
}
func (b base) Close() error { return b.in.Close() }

// holder returns the value that holds key now.
func (b base) holder(ctx context.Context, key string) string {
	h, _, _ := b.in.(driver.Inspector).Inspect(ctx, key)
	return h.Value
}

// noExclusion gives every acquisition a key of its own.
type noExclusion struct{ base }

func (b noExclusion) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return b.in.Acquire(ctx, key+"\x00"+value, value, ttl)
}
func (b noExclusion) Release(ctx context.Context, key, value string) error {
	return b.in.Release(ctx, key+"\x00"+value, value)
}
func (b noExclusion) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	return b.base.Extend(ctx, key+"\x00"+value, value, ttl)
}

// neverExpires grants leases far longer than asked.
type neverExpires struct{ base }

func (b neverExpires) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return b.in.Acquire(ctx, key, value, time.Hour)
}
func (b neverExpires) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	return b.base.Extend(ctx, key, value, time.Hour)
}

// releasesAnyone releases whoever holds the key.
type releasesAnyone struct{ base }

func (b releasesAnyone) Release(ctx context.Context, key, value string) error {
	if err := b.in.Release(ctx, key, value); !errors.Is(err, driver.ErrNotHeld) {
		return err
	}
	if h := b.holder(ctx, key); h != "" {
		b.in.Release(ctx, key, h)
	}
	return driver.ErrNotHeld
}

// extendsAnyone extends whoever holds the key.
type extendsAnyone struct{ base }

func (b extendsAnyone) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	if err := b.base.Extend(ctx, key, value, ttl); !errors.Is(err, driver.ErrNotHeld) {
		return err
	}
	if h := b.holder(ctx, key); h != "" {
		b.base.Extend(ctx, key, h, ttl)
	}
	return driver.ErrNotHeld
}

// revivesExpired extends a lease that ran out, if nobody took the key.
type revivesExpired struct{ base }

func (b revivesExpired) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	err := b.base.Extend(ctx, key, value, ttl)
	if errors.Is(err, driver.ErrNotHeld) && b.holder(ctx, key) == "" {
		if _, err := b.in.Acquire(ctx, key, value, ttl); err == nil {
			return nil
		}
	}
	return err
}

// staleTokens hands out the same token every time.
type staleTokens struct{ base }

func (b staleTokens) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	l, err := b.in.Acquire(ctx, key, value, ttl)
	if err == nil {
		l.Token = 1
	}
	return l, err
}

// transfersAnyone transfers the key from whoever holds it.
type transfersAnyone struct{ base }

func (b transfersAnyone) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	if h := b.holder(ctx, key); h != "" {
		value = h
	}
	return b.in.(driver.Transferer).Transfer(ctx, key, value, next, ttl)
}

// transfersStaleTokens keeps the token across a transfer.
type transfersStaleTokens struct{ base }

func (b transfersStaleTokens) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	l, err := b.in.(driver.Transferer).Transfer(ctx, key, value, next, ttl)
	if err == nil {
		l.Token--
	}
	return l, err
}

// silentReleases claims to announce releases but never does.
type silentReleases struct{ base }

func (silentReleases) Watch(context.Context, string) (driver.Watch, error) { return silentWatch{}, nil }

type silentWatch struct{}

func (silentWatch) Released() <-chan struct{} { return nil }
func (silentWatch) Close() error              { return nil }
