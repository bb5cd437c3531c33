package drivertest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/drivertest"
)

// TestContention_memory runs a contention on the memory driver: every
// acquisition is recorded, and nothing is reported.
func TestContention_memory(t *testing.T) {
	store := memory.New()
	var done atomic.Int64
	rep := drivertest.Contention{
		Clients: []*lock.Client{client(t, store), client(t, store)},
		Keys:    []string{"a", "b"},
		N:       500,
		Vary:    true,
		Done:    func(int) { done.Add(1) },
	}.Run(t, drivertest.Context(t, time.Minute), true)
	if rep.History.Len() != 500 || len(rep.Errors) != 0 || done.Load() != 500 {
		t.Errorf("%d holdings, %d acquisitions released, errors %v; want 500, 500, none", rep.History.Len(), done.Load(), rep.Errors)
	}
}

// TestContention_catchesDoubleGrants runs a contention on a driver that
// grants held keys: the run reports overlapping holdings.
func TestContention_catchesDoubleGrants(t *testing.T) {
	store := grantsHeld{memory.New()}
	rec := &recorder{TB: t}
	drivertest.Contention{
		Clients: []*lock.Client{client(t, store), client(t, store), client(t, store), client(t, store)},
		Keys:    []string{"k"},
		N:       500,
		Vary:    true,
		Retry:   true, // the releases of double grants fail
	}.Run(rec, drivertest.Context(t, time.Minute), false)
	if !strings.Contains(strings.Join(rec.errors, "\n"), "overlapping holdings") {
		t.Errorf("a driver that grants held keys was not caught; the run reported %q", rec.errors)
	}
}

func client(t *testing.T, c driver.Connector) *lock.Client {
	l := lock.OpenConnector(c)
	t.Cleanup(func() { l.Close() })
	return l
}

// recorder is a testing.TB that records the errors reported to it
// instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Logf(string, ...any) {}

// grantsHeld is a broken connector: its connections grant a key that
// another value holds.
type grantsHeld struct{ driver.Connector }

func (g grantsHeld) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := g.Connector.Connect(ctx)
	return grantingConn{cn}, err
}

type grantingConn struct{ driver.Conn }

func (g grantingConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	l, err := g.Conn.Acquire(ctx, key, value, ttl)
	if errors.Is(err, driver.ErrHeld) {
		return driver.Lease{}, nil
	}
	return l, err
}
