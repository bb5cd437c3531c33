// Package memory is an in-process lock driver, registered as "memory": the
// reference for the semantics every driver keeps, a fast backend for tests,
// and a real one for programs that run as a single process.
//
//	import _ "github.com/distlock/lock/drivers/memory"
//
//	c, err := lock.Open("memory", "jobs")
//
// The DSN names a store shared inside the process: clients opened with the
// same DSN contend with each other, clients opened with different DSNs do
// not. Any string is a valid DSN, the empty one included. A store lives as
// long as the process; [New] makes a private one instead.
//
// Leases expire by the process's monotonic clock. Every key has a fencing
// counter that grows with each acquisition and is kept for the life of the
// store, so a store holds a small record for every key it has ever seen.
// Releases wake waiters at once; an expiry wakes them at their next poll.
package memory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

func init() {
	lock.Register("memory", Driver{})
}

// Driver is the memory driver. Its zero value is ready to use; lock.Open
// uses the one registered as "memory".
type Driver struct{}

var (
	storesMu sync.Mutex
	stores   = make(map[string]*Store)
)

// OpenConnector returns a connector to the store named dsn, creating the
// store on first use.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) {
	storesMu.Lock()
	defer storesMu.Unlock()
	s, ok := stores[dsn]
	if !ok {
		s = New()
		stores[dsn] = s
	}
	return s, nil
}

// Store is a set of locks in memory. It is a [driver.Connector]: every
// client opened on it with lock.OpenConnector shares its locks. It is safe
// for concurrent use.
type Store struct {
	mu   sync.Mutex
	keys map[string]*entry
	subs driver.Subscribers // the watches of releases, by key
}

// entry is the state of one key. A free key keeps its entry, and so its
// fencing counter.
type entry struct {
	value   string    // holder's value; "" when free
	expires time.Time // end of the holder's lease
	fence   uint64    // token of the latest acquisition
}

func (e *entry) heldAt(now time.Time) bool { return e.value != "" && now.Before(e.expires) }

// New returns a new, empty store that no DSN names.
func New() *Store {
	return &Store{keys: make(map[string]*entry)}
}

// String describes s by the number of keys it keeps records for (it holds
// no secret). Unlike printing its fields, it is safe while s is in use.
func (s *Store) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("memory.Store(%d keys)", len(s.keys))
}

// GoString is String, so that %#v is safe while s is in use too.
func (s *Store) GoString() string { return s.String() }

// Connect returns a connection to s.
func (s *Store) Connect(context.Context) (driver.Conn, error) { return conn{s}, nil }

// conn is a client's view of a store. Every method is one step under the
// store's mutex.
type conn struct{ s *Store }

var (
	_ driver.Conn       = conn{}
	_ driver.Extender   = conn{}
	_ driver.Waiter     = conn{}
	_ driver.Inspector  = conn{}
	_ driver.Transferer = conn{}
)

func (c conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	if err := ctx.Err(); err != nil {
		return driver.Lease{}, err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	e := s.keys[key]
	if e == nil {
		e = &entry{}
		s.keys[key] = e
	}
	if e.heldAt(now) {
		return driver.Lease{}, driver.ErrHeld
	}
	e.value, e.expires = value, now.Add(ttl)
	e.fence++
	return driver.Lease{Token: e.fence, Fenced: true}, nil
}

// held returns the entry of key if value holds it now, and nil otherwise.
// s.mu must be held.
func (s *Store) held(key, value string) *entry {
	if e := s.keys[key]; e != nil && e.value == value && e.heldAt(time.Now()) {
		return e
	}
	return nil
}

func (c conn) Release(ctx context.Context, key, value string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.held(key, value)
	if e == nil {
		return driver.ErrNotHeld
	}
	e.value = ""
	s.subs.Wake(key)
	return nil
}

func (c conn) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	if err := ctx.Err(); err != nil {
		return driver.Lease{}, err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.held(key, value)
	if e == nil {
		return driver.Lease{}, driver.ErrNotHeld
	}
	e.value, e.expires = next, time.Now().Add(ttl)
	e.fence++
	return driver.Lease{Token: e.fence, Fenced: true}, nil
}

func (c conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.held(key, value)
	if e == nil {
		return driver.ErrNotHeld
	}
	e.expires = time.Now().Add(ttl)
	return nil
}

func (c conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	if err := ctx.Err(); err != nil {
		return driver.Holder{}, false, err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	e := s.keys[key]
	if e == nil || !e.heldAt(now) {
		return driver.Holder{}, false, nil
	}
	return driver.Holder{
		Value: e.value,
		TTL:   e.expires.Sub(now),
		Lease: driver.Lease{Token: e.fence, Fenced: true},
	}, true, nil
}

func (c conn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &watch{s: s, key: key, c: make(chan struct{}, 1)}
	s.subs.Add(key, w.c)
	return w, nil
}

func (conn) Close() error { return nil }

// watch is a subscription to releases of one key.
type watch struct {
	s   *Store
	key string
	c   chan struct{}
}

func (w *watch) Released() <-chan struct{} { return w.c }

func (w *watch) Close() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.subs.Remove(w.key, w.c)
	return nil
}
