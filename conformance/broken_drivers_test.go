package conformance_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// The broken drivers of broken_test.go's variants: the memory driver with
// one promise taken away each.

// brokenConnector connects to store and wraps each connection in a broken
// variant.
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
func (b base) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	return b.in.(driver.Inspector).Inspect(ctx, key)
}

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

// leaseTransfers is a driver.LeaseTransferer that transfers by value,
// as the memory driver does: intact.
type leaseTransfers struct{ base }

func (b leaseTransfers) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	return b.in.(driver.Transferer).Transfer(ctx, key, value, next, ttl)
}

func (b leaseTransfers) TransferLease(ctx context.Context, key, value string, _ driver.Lease, next string, ttl time.Duration) (driver.Lease, error) {
	return b.Transfer(ctx, key, value, next, ttl)
}

// leaseTransfersAnyone transfers the key it is handed a lease of from
// whoever holds it.
type leaseTransfersAnyone struct{ leaseTransfers }

func (b leaseTransfersAnyone) TransferLease(ctx context.Context, key, value string, _ driver.Lease, next string, ttl time.Duration) (driver.Lease, error) {
	if h := b.holder(ctx, key); h != "" {
		value = h
	}
	return b.Transfer(ctx, key, value, next, ttl)
}

// silentReleases claims to announce releases but never does.
type silentReleases struct{ base }

func (silentReleases) Watch(context.Context, string) (driver.Watch, error) { return silentWatch{}, nil }

type silentWatch struct{}

func (silentWatch) Released() <-chan struct{} { return nil }
func (silentWatch) Close() error              { return nil }

// unboundedSlots gives each grant of a semaphore's slot a key of its own,
// so that a semaphore lets anyone in, while plain locks keep their
// promises.
type unboundedSlots struct{ base }

func slotOf(key, value string) string {
	if strings.Contains(key, "\x1fsem\x1f") {
		return key + "\x00" + value
	}
	return key
}
func (b unboundedSlots) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return b.in.Acquire(ctx, slotOf(key, value), value, ttl)
}
func (b unboundedSlots) Release(ctx context.Context, key, value string) error {
	return b.in.Release(ctx, slotOf(key, value), value)
}
func (b unboundedSlots) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	return b.base.Extend(ctx, slotOf(key, value), value, ttl)
}

// blindInspect reports every key free, so that a semaphore cannot read
// the size its holders asked for.
type blindInspect struct{ base }

func (blindInspect) Inspect(context.Context, string) (driver.Holder, bool, error) {
	return driver.Holder{}, false, nil
}

// truncatesValues keeps the first 64 characters of a value, the old
// limit, as a MySQL table of the old schema does in a non-strict
// sql_mode.
type truncatesValues struct{ base }

func cut(value string) string { return value[:min(len(value), 64)] }

func (b truncatesValues) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return b.in.Acquire(ctx, key, cut(value), ttl)
}
func (b truncatesValues) Release(ctx context.Context, key, value string) error {
	return b.in.Release(ctx, key, cut(value))
}
func (b truncatesValues) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	return b.base.Extend(ctx, key, cut(value), ttl)
}

// refusesLongValues fails to acquire with a value over 64 characters, as
// a table of the old schema does in a strict sql_mode.
type refusesLongValues struct{ base }

func (b refusesLongValues) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	if len(value) > 64 {
		return driver.Lease{}, errors.New("data too long for column 'value'")
	}
	return b.in.Acquire(ctx, key, value, ttl)
}

// namespaces are the memory driver's scratch namespaces: a store per
// name, made at first use, which Drop deletes.
type namespaces struct {
	mu sync.Mutex
	m  map[string]*memory.Store
}

func (n *namespaces) store(name string) *memory.Store {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = make(map[string]*memory.Store)
	}
	if n.m[name] == nil {
		n.m[name] = memory.New()
	}
	return n.m[name]
}

func (n *namespaces) drop(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, name)
}

// scratchConn is a connection to the namespace name: each call goes to
// the namespace's store of the moment, through wrap.
type scratchConn struct {
	ns   *namespaces
	name string
	wrap func(driver.Conn) driver.Conn
}

func (s scratchConn) conn() driver.Conn {
	c, _ := s.ns.store(s.name).Connect(context.Background())
	return s.wrap(c)
}

func (s scratchConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return s.conn().Acquire(ctx, key, value, ttl)
}
func (s scratchConn) Release(ctx context.Context, key, value string) error {
	return s.conn().Release(ctx, key, value)
}
func (s scratchConn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	return s.conn().(driver.Extender).Extend(ctx, key, value, ttl)
}
func (s scratchConn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	return s.conn().(driver.Inspector).Inspect(ctx, key)
}
func (s scratchConn) Close() error { return nil }

func (s scratchConn) Drop(context.Context) error {
	s.ns.drop(s.name)
	return nil
}

// keepingScratch drops nothing.
type keepingScratch struct{ scratchConn }

func (keepingScratch) Drop(context.Context) error { return nil }
