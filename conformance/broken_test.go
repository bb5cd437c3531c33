package conformance_test

import (
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

// A checker that cannot fail proves nothing. Each broken variant is the
// memory driver with one promise taken away (broken_drivers_test.go); the
// suite, run on it in a child process, must fail, and fail in the case that
// guards that promise.

// variants maps a broken driver's name to the cases that must catch it.
// The intact variants are the controls: the wrappers alone break nothing.
var variants = map[string]variant{
	"intact": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return base{in} }),
	},
	"noMutualExclusion": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return noExclusion{base{in}} }),
		caught:  []string{"TryAcquire_held", "Contention_oneKey", "Contention_manyKeys", "Semaphore_atMostN"},
	},
	"unboundedSlots": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return unboundedSlots{base{in}} }),
		caught:  []string{"Semaphore_atMostN", "Semaphore_expiryFreesSlot", "Semaphore_waitWakes"},
	},
	"blindInspect": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return blindInspect{base{in}} }),
		caught:  []string{"Semaphore_sizeMismatch"},
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
	"leaseTransfersIntact": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return leaseTransfers{base{in}} }),
	},
	"leaseTransfersAnyone": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return leaseTransfersAnyone{leaseTransfers{base{in}}} }),
		caught:  []string{"Driver_transferLease"},
	},
	"silentReleases": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return silentReleases{base{in}} }),
		caught:  []string{"Acquire_waitsForRelease"},
	},
	"truncatesValues": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return truncatesValues{base{in}} }),
		caught:  []string{"Values_longest", "Driver_longestValue"},
	},
	"refusesLongValues": {
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return refusesLongValues{base{in}} }),
		caught:  []string{"Values_longest", "Driver_longestValue"},
	},
	"dropKeepsKeys": {
		harness: func(t *testing.T) conformance.Harness {
			h := memoryHarness(func(in driver.Conn) driver.Conn { return base{in} })(t)
			ns := &namespaces{}
			h.NewScratchConn = func(t *testing.T, name string) driver.Conn {
				return keepingScratch{scratchConn{ns: ns, name: name, wrap: func(in driver.Conn) driver.Conn { return base{in} }}}
			}
			return h
		},
		caught: []string{"Drop_scratch"},
	},
	"wiredIntact": {
		harness: wiredHarness(dialAll),
	},
	"dialerIgnored": {
		harness: wiredHarness(dialNone),
		caught:  []string{"Dialer_everyConnection", "Dialer_failing"},
	},
	"dialerForSome": {
		harness: wiredHarness(dialFirst),
		caught:  []string{"Dialer_everyConnection"},
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

// variant is a driver with a promise broken, and the cases that must
// catch it.
type variant struct {
	harness func(t *testing.T) conformance.Harness
	caught  []string
}

// memoryHarness is the harness of the memory driver with wrap around it.
func memoryHarness(wrap func(driver.Conn) driver.Conn) func(t *testing.T) conformance.Harness {
	return func(t *testing.T) conformance.Harness {
		bc := brokenConnector{memory.New(), wrap}
		ns := &namespaces{}
		return conformance.Harness{
			NewClient: func(t *testing.T) *lock.Client { return lock.OpenConnector(bc) },
			NewScratchConn: func(t *testing.T, name string) driver.Conn {
				return scratchConn{ns: ns, name: name, wrap: wrap}
			},
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
			// Some cases catch a variant by a race that a loaded machine
			// may not run at once (a quorum of one lets two holders in only
			// if they win different nodes): the cases that passed run up
			// to twice more.
			for try := 0; try < 2 && !allFailed(failed, v.caught); try++ {
				again := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+run, "-test.v", "-test.timeout=2m")
				again.Env = cmd.Env
				more, _ := again.CombinedOutput()
				for c := range failedCases(string(more)) {
					failed[c] = true
				}
			}
			for _, c := range v.caught {
				if !failed[c] {
					t.Errorf("case %s did not catch the %s driver; failed cases: %v", c, name, keys(failed))
				}
			}
		})
	}
}

var failLine = regexp.MustCompile(`--- FAIL: TestBrokenDriver/([^/\s]+)`)

// allFailed reports whether every case of want failed.
func allFailed(failed map[string]bool, want []string) bool {
	for _, c := range want {
		if !failed[c] {
			return false
		}
	}
	return true
}

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
