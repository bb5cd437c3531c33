package locktest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/fencing"
)

// Backend is a lock backend for tests, whose faults a test turns on and
// off. It is a [driver.Connector]: open clients on it with
// lock.OpenConnector, as many as the test needs. The faults act on the
// calls of every client opened on it, and its record of locks (for
// [Backend.Lose], [Backend.Holds] and [Backend.Supersede]) covers the
// locks granted through it only. A Backend is safe for concurrent use.
//
// The zero Backend is ready to use, over a memory store of its own made
// at its first connection.
type Backend struct {
	mu    sync.Mutex
	inner driver.Connector // nil until the first Connect of a zero Backend
	keys  map[string]*keyState
	down  time.Time     // calls fail until then
	ext   extFault      // the next extensions' fault
	rel   relFault      // the next releases' delay
	hang  chan struct{} // closed by Resume; hung extensions wait on it
	hung  int           // extensions waiting on hang
}

// keyState is what b knows of one key.
type keyState struct {
	cur   *grant // the latest grant on the key through b, while it may be held
	gone  *grant // the latest grant b made lost, whose value it answers "not held"
	last  uint64 // the newest token handed out on the key, or reserved by Supersede
	stale bool   // Supersede: the next grant gets a token older than one admitted
}

// extFault is a fault of the next n extensions.
type extFault struct {
	kind extKind
	n    int
	err  error // for failExt
}

type extKind int

const (
	noExtFault extKind = iota
	failExt            // return err
	refuseExt          // the backend lets the lock go and answers "not held"
	hangExt            // wait for Resume or the caller's context
)

// relFault delays the next n releases by d.
type relFault struct {
	n int
	d time.Duration
}

// New returns a Backend over a new, empty memory store of its own. Made
// inside a testing/synctest bubble, it and its store run on the bubble's
// clock, and every fault is deterministic there.
func New() *Backend { return &Backend{inner: memory.New()} }

// Wrap returns a Backend over c, which may be any driver's connector. The
// Backend does not close c. Wrap(nil) is New().
func Wrap(c driver.Connector) *Backend {
	if c == nil {
		return New()
	}
	return &Backend{inner: c}
}

// String describes b by its faults in force. It is safe while b is in use.
func (b *Backend) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := "locktest.Backend("
	if d := time.Until(b.down); d > 0 {
		s += fmt.Sprintf("down for %v, ", d)
	}
	if b.ext.n > 0 {
		s += fmt.Sprintf("%d extensions to %s, ", b.ext.n, [...]string{"", "fail", "refuse", "hang"}[b.ext.kind])
	}
	if b.rel.n > 0 {
		s += fmt.Sprintf("%d releases to delay by %v, ", b.rel.n, b.rel.d)
	}
	return s + fmt.Sprintf("%d keys)", len(b.keys))
}

// errDown is the error of every call while the backend is unavailable. It
// matches lock.ErrUnavailable, and says the connection was refused, so
// that the core knows the request reached no server.
var errDown = fmt.Errorf("%w: locktest: the backend is down (%w)", driver.ErrUnavailable, syscall.ECONNREFUSED)

// Unavailable makes the backend unavailable for d from now. Every call of
// every client on b fails at once with an error matching
// lock.ErrUnavailable, as with a server that refuses connections: acquire,
// extend, release, transfer, watch, ping and inspect. A waiting Acquire
// keeps trying through it, and takes the key once b is back, if the outage
// is shorter than lock.MaxUnavailable. A held lock that cannot be extended
// meanwhile ends at its ValidUntil. A later call replaces the outage's
// end, and d <= 0 ends it now.
func (b *Backend) Unavailable(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down = time.Time{}
	if d > 0 {
		b.down = time.Now().Add(d)
	}
}

// unavailable returns errDown while b is down.
func (b *Backend) unavailable() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Now().Before(b.down) {
		return errDown
	}
	return nil
}

// FailExtensions makes the next n extensions fail with err, without asking
// the backend. A nil err stands for an error matching lock.ErrUnavailable.
// Such a failure is one retrying may fix: the lock stays valid until its
// ValidUntil, and KeepAlive (so Do) tries again. n <= 0 cancels the fault.
// It replaces any extension fault set before ([Backend.RefuseExtensions],
// [Backend.HangExtensions]).
func (b *Backend) FailExtensions(n int, err error) {
	if err == nil {
		err = fmt.Errorf("%w: locktest: extension failed", driver.ErrUnavailable)
	}
	b.setExtFault(extFault{kind: failExt, n: n, err: err})
}

// RefuseExtensions makes the backend refuse the next n extensions: it lets
// the lock go, so that others may take the key, and answers that the lock
// is not held. The lock ends at once, known lost: its Done closes, and
// Do's function is cancelled with a cause matching lock.ErrLost. n <= 0
// cancels the fault. It replaces any extension fault set before.
func (b *Backend) RefuseExtensions(n int) {
	b.setExtFault(extFault{kind: refuseExt, n: n})
}

// HangExtensions makes the next n extensions hang, as on a backend that
// stopped answering, until [Backend.Resume] lets them go on to the backend
// or the caller's context ends. The core ends an extension's context at
// the lock's ValidUntil, so a lock whose extension hangs ends then. n <= 0
// cancels the fault, but does not let go of extensions already hung. It
// replaces any extension fault set before.
func (b *Backend) HangExtensions(n int) {
	b.setExtFault(extFault{kind: hangExt, n: n})
}

func (b *Backend) setExtFault(f extFault) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f.n <= 0 {
		f = extFault{}
	}
	b.ext = f
	if f.kind == hangExt && b.hang == nil {
		b.hang = make(chan struct{})
	}
}

// Resume lets every hung extension go on to the backend, ends the fault of
// [Backend.HangExtensions], and returns how many extensions it let go.
func (b *Backend) Resume() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ext.kind == hangExt {
		b.ext = extFault{}
	}
	n := b.hung
	if b.hang != nil {
		close(b.hang)
		b.hang = nil
	}
	b.hung = 0
	return n
}

// nextExtFault takes the fault of the next extension, if any: its kind,
// the channel a hung extension waits on, and a failure's error.
func (b *Backend) nextExtFault() (kind extKind, resume <-chan struct{}, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := &b.ext
	if f.n <= 0 {
		return noExtFault, nil, nil
	}
	kind, err = f.kind, f.err
	if f.n--; f.n == 0 {
		*f = extFault{}
	}
	if kind == hangExt {
		b.hung++
		resume = b.hang
	}
	return kind, resume, err
}

// waitHung waits for resume, or for ctx to end. It returns ctx's error
// then.
func (b *Backend) waitHung(ctx context.Context, resume <-chan struct{}) error {
	select {
	case <-resume:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hang == resume && b.hung > 0 {
		b.hung--
	}
	return ctx.Err()
}

// DelayReleases makes each of the next n releases wait d before it goes to
// the backend, as on a slow network: the key stays held meanwhile. A
// release whose context ends first fails with the context's error, and
// the lock stays held until its TTL runs out. A handover of a lock to a
// waiting call of the same client counts as a release. n <= 0 or d <= 0
// cancels the fault.
func (b *Backend) DelayReleases(n int, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rel = relFault{}
	if n > 0 && d > 0 {
		b.rel = relFault{n: n, d: d}
	}
}

// delayRelease waits for the delay of the next release, if any.
func (b *Backend) delayRelease(ctx context.Context) error {
	b.mu.Lock()
	d := time.Duration(0)
	if b.rel.n > 0 {
		d = b.rel.d
		if b.rel.n--; b.rel.n == 0 {
			b.rel = relFault{}
		}
	}
	b.mu.Unlock()
	if d == 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loseTimeout bounds the release that Lose and a refused extension send
// to the backend.
const loseTimeout = 2 * time.Second

// Lose loses the lock held on key now, as a backend does when a session
// expires or a lease is revoked. The backend lets the key go, so that
// others may take it, and then tells the lock's client, through the
// driver's loss signal (driver.Lease.Lost). The lock's Done closes, its
// Err matches lock.ErrLost, later extensions and its release fail with
// lock.ErrNotHeld, and the function of the Do that holds it is cancelled
// with a cause matching lock.ErrLost.
//
// Lose returns once the client has been told. The client ends the lock on
// a goroutine of its own, so Done closes a moment later: under
// testing/synctest, synctest.Wait after Lose lets it. Lose reports false,
// and does nothing, if no lock on key granted through b is held.
func (b *Backend) Lose(key string) bool {
	b.mu.Lock()
	ks := b.keys[key]
	var g *grant
	if ks != nil && ks.cur != nil && ks.cur.heldAt(time.Now()) {
		g = ks.cur
		b.finish(g, grantLost)
	}
	b.mu.Unlock()
	if g == nil {
		return false
	}
	g.releaseInner()
	close(g.lost)
	return true
}

// Holds reports whether the lock on key with token is held now, by b's
// account. That is, it was granted through b, it was neither released nor
// lost, and its lease (from the start of its last acquisition or
// extension) has not run out. On a driver without fencing tokens, pass
// the zero token. A fake of the protected resource can call Holds on each
// write, to catch a writer that goes on after its lock ended.
func (b *Backend) Holds(key string, token fencing.Token) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ks := b.keys[key]
	return ks != nil && ks.cur != nil && ks.cur.token == uint64(token) && ks.cur.heldAt(time.Now())
}

// Supersede makes the locks on key stale at guard g, as a holder that took
// key over while they were paused would have. It admits to g, for
// resource, a token newer than that of every lock on key granted through b
// so far, and newer than the token of the next lock granted on key. So the
// lock held now, if any, and the next one get stale tokens: g refuses
// their writes with fencing.ErrStale. Later locks get newer tokens and are
// admitted. Supersede returns g's error, if g refused the token.
//
// Use it to test the path of a writer whose write a guard refuses. Every
// client of key must go through b, since b numbers key's tokens. On a
// driver without fencing tokens, locks carry none, and Supersede returns
// an error matching errors.ErrUnsupported once b has seen a lock on key.
func (b *Backend) Supersede(ctx context.Context, key string, g fencing.Guard, resource string) error {
	if g == nil {
		return errors.New("locktest: Supersede: nil guard")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	b.mu.Lock()
	ks := b.key(key)
	if ks.cur != nil && !ks.cur.fenced {
		b.mu.Unlock()
		return fmt.Errorf("locktest: Supersede: the driver issues no fencing tokens: %w", errors.ErrUnsupported)
	}
	ks.stale = true
	newer := ks.last + 2 // the next grant gets ks.last+1
	b.mu.Unlock()
	return g.Do(ctx, resource, fencing.Token(newer), func(context.Context) error { return nil })
}

// key returns the state of key, making it. b.mu must be held.
func (b *Backend) key(key string) *keyState {
	if b.keys == nil {
		b.keys = make(map[string]*keyState)
	}
	ks := b.keys[key]
	if ks == nil {
		ks = &keyState{}
		b.keys[key] = ks
	}
	return ks
}

// token returns the token to hand out for a grant on key whose driver
// gave tok. Tokens handed out on a key strictly increase, and skip the
// tokens Supersede admitted. b.mu must be held.
func (ks *keyState) token(tok uint64) uint64 {
	if ks.stale {
		ks.stale = false
		tok = ks.last + 1
		ks.last += 2 // reserved by Supersede
		return tok
	}
	tok = max(tok, ks.last+1)
	ks.last = tok
	return tok
}
