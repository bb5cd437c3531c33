// Package driver defines the interfaces a lock backend implements to plug into
// package [github.com/distlock/lock].
//
// Most code should use package lock instead. It owns everything that is
// the same for every backend (random values, the validity clock, retries,
// auto-extension, validation, counters). Drivers are used through it, the
// way database/sql uses database/sql/driver.
//
// A driver speaks one backend's protocol and makes one attempt per call.
// It never waits for a held key to be released, and never judges validity
// on the client's clock. The core does all of that. The core calls a
// driver's methods concurrently from many goroutines, so every method must
// be safe for concurrent use.
//
// A driver does not retry an operation. The core decides what comes next.
// Within one call, a driver may re-send a request in two cases only. In
// the first, the request provably never reached a server. The dial
// failed, the connection was refused, or the client library reports it
// unsent. In the second, sending it again cannot change the outcome. That
// holds for a read, and for a write whose first sending the driver checked
// first. For example, ZooKeeper's driver looks for the node a lost create
// may have made before it creates again.
//
// Optional capabilities are separate interfaces. A [Conn] may implement
// [Extender], [LeaseConn], [Waiter], [Transferer], [LeaseTransferer],
// [Pinger], [Inspector], [Dropper], [ScratchLister] and [SettingsChecker].
// A [Driver] may implement [DialerDriver]. The core discovers them by type
// assertion and documents what it does without them.
//
// Keys and values handed to a driver have been validated by the core. A
// key is 1 to 512 bytes of valid UTF-8 without NUL bytes. A value is a
// string of at most [MaxValueLen] printable ASCII characters (letters,
// digits, '-' and '_'), unique to one acquisition.
package driver

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"
)

// MaxValueLen is the length of the longest value the core hands to a
// driver, in characters. Every driver stores and compares values up to
// this length whole. An election's leader value travels in the lock
// value, so this bounds how long a leader value may be.
const MaxValueLen = 192

// ErrHeld is returned by [Conn.Acquire] when the key is held by another
// value, and only then. Any other failure (a backend that is down, a timeout, a
// quorum that could not be reached because nodes did not answer) must be
// reported as some other error, so that callers can tell "someone else holds
// it" from "the backend is unhealthy". Drivers may wrap it.
var ErrHeld = errors.New("key is held by another holder")

// ErrNotHeld is returned by [Conn.Release] and [Extender.Extend] when the given
// value does not hold the key (it expired, was released, or never held it), and
// only then. Drivers may wrap it.
var ErrNotHeld = errors.New("key is not held by this value")

// ErrMisconfigured marks a failure that retrying cannot fix. Examples are
// credentials or an identity that the backend refused, a TLS handshake
// that failed on a certificate or a protocol mismatch, or a host name that
// does not resolve.
// Drivers wrap it around the backend's error, with
// fmt.Errorf("%w: %w", driver.ErrMisconfigured, err) for instance. The
// core then ends the call at once instead of retrying. A driver that cannot
// tell such a failure apart may leave it unmarked. The core recognizes the
// standard library's DNS and certificate errors itself.
var ErrMisconfigured = errors.New("misconfigured, so retrying cannot help")

// ErrUnavailable marks a failure to reach the backend that retrying may
// fix. Examples are refused connections, a server that did not answer
// within the driver's request timeout, and a quorum of nodes that could
// not be reached.
// Drivers wrap it around the backend's error. A waiting acquisition keeps
// trying through such failures for a bounded time only (see the core's
// MaxUnavailable). The core recognizes refused connections by itself.
var ErrUnavailable = errors.New("backend unavailable")

// Driver is the interface a lock backend registers with lock.Register.
//
// Unlike database/sql/driver, which keeps Driver.Open for drivers written
// before connectors existed, a driver here has one way in. Every lock.Open
// goes through OpenConnector. So a malformed DSN is reported at once, and
// a driver has one code path to test.
type Driver interface {
	// OpenConnector parses dsn and returns a Connector for it. It must not
	// contact the backend, because lock.Open never does.
	OpenConnector(dsn string) (Connector, error)
}

// Connector is a parsed, fixed configuration of a driver that can open
// connections. A Connector is what lock.OpenConnector takes. Drivers' own
// constructors (for example ones taking an existing client of the backend)
// return one.
type Connector interface {
	// Connect returns a connection to the backend. The core calls it
	// lazily, once per lock.Client, at the first operation that needs it.
	// If it fails, the core calls it again at the next operation. The
	// context bounds the call only, not the connection's life.
	Connect(ctx context.Context) (Conn, error)
}

// Lease is what a successful [Conn.Acquire] reports besides success.
type Lease struct {
	// Token is the key's fencing token for this acquisition, if Fenced.
	// Tokens of one key strictly increase with each acquisition, across all
	// clients of the backend.
	Token uint64

	// Fenced reports whether Token is set. A driver that cannot give tokens
	// leaves it false.
	Fenced bool

	// State is the driver's own record of this grant, a revision say. The
	// core never reads it. It hands the Lease back to [LeaseConn] methods.
	State any

	// Lost, if not nil, is closed by the driver when it learns that this
	// grant is lost, for example because a session expired or a lease was
	// revoked. The core then ends the lock at once, as known lost. Without
	// it, the core learns of a loss at the next extension, or when the
	// validity runs out.
	Lost <-chan struct{}
}

// Conn is a connection to a lock backend (often a pool of network
// connections). It must be safe for concurrent use.
type Conn interface {
	// Acquire makes one attempt to set key to value with a lease of ttl. If
	// the key is held by another value it returns an error matching ErrHeld.
	// The lease must start no earlier than the call, because the core
	// computes validity from a clock reading taken before calling Acquire.
	//
	// If Acquire returns an error other than ErrHeld, the core assumes the
	// key may have been set anyway (a reply lost on the network). It then
	// calls Release with the same value, so a driver need not clean up
	// after itself on error. A quorum driver still cleans up the nodes it
	// locked when it fails. The core skips that Release when the error
	// matches ErrMisconfigured, or when every connection was refused. In
	// those cases no request reached a server.
	Acquire(ctx context.Context, key, value string, ttl time.Duration) (Lease, error)

	// Release deletes key if, and only if, it is held by value. Otherwise
	// it returns an error matching ErrNotHeld and changes nothing.
	Release(ctx context.Context, key, value string) error

	// Close releases the connection's resources. Locks still held expire by
	// their TTL.
	Close() error
}

// Extender is implemented by a [Conn] that can extend a held lease. Without
// it, lock.Lock.Extend returns an error matching errors.ErrUnsupported and
// lock.Client.Do cancels its function's context when the first lease runs
// out.
type Extender interface {
	// Extend resets the lease of key to ttl from now if, and only if, key
	// is held by value. Otherwise it returns an error matching ErrNotHeld
	// and changes nothing. An expired lease must never be revived, even if
	// no one else took the key in the meantime.
	Extend(ctx context.Context, key, value string, ttl time.Duration) error
}

// LeaseConn is implemented by a [Conn] that needs a grant's [Lease] back
// to extend or release it, to compare a revision say. For a lock it holds,
// the core then calls ExtendLease instead of [Extender.Extend], and
// ReleaseLease instead of [Conn.Release]. The cleanup after a failed
// acquisition, whose lease the core never saw, still calls Conn.Release,
// so that must work by value alone.
type LeaseConn interface {
	// ExtendLease is Extender.Extend for the grant lease. It returns the
	// lease to hand back next time. Token and Fenced must not change.
	ExtendLease(ctx context.Context, key, value string, lease Lease, ttl time.Duration) (Lease, error)

	// ReleaseLease is Conn.Release for the grant lease, as last returned
	// by Acquire or ExtendLease.
	ReleaseLease(ctx context.Context, key, value string, lease Lease) error
}

// Transferer is implemented by a [Conn] that can pass a held lease straight
// to a new acquisition in one step. The core uses it when a lock is
// released while another call of the same client waits for the key. The
// key goes to the waiting call without being released and taken again,
// which spares a round trip per handoff. Without it, the lock is released
// and the waiting call tries at once.
type Transferer interface {
	// Transfer makes next the holder of key for ttl from now if, and only
	// if, value holds key. next gets a new lease and, where the driver
	// issues them, a fencing token greater than any before. Otherwise
	// Transfer returns an error matching ErrNotHeld and changes nothing.
	// The key is never free in between, so the transfer is not announced
	// as a release. An expired lease must never be transferred.
	Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (Lease, error)
}

// LeaseTransferer is implemented by a [LeaseConn] that is a [Transferer]
// and can use the grant's [Lease] to transfer it, to skip a read of the
// key's revision say. The core then calls TransferLease instead of
// Transferer.Transfer.
type LeaseTransferer interface {
	// TransferLease is Transferer.Transfer for the grant lease, as last
	// returned by Acquire or ExtendLease.
	TransferLease(ctx context.Context, key, value string, lease Lease, next string, ttl time.Duration) (Lease, error)
}

// Waiter is implemented by a [Conn] whose backend can announce releases.
// Without it, waiters poll at the pace of their retry strategy. With it, they
// wake when a release is announced, and still poll at that pace as a safety
// net (an expired lease is usually not announced).
type Waiter interface {
	// Watch subscribes to releases of key. It returns once the subscription
	// is in place, so that a release that happens after Watch returns is not
	// missed. For a backend of several nodes, "in place" means on every
	// node that is answering, or on a quorum once a short timer runs out.
	// Watch never waits for a node that stopped answering. ctx bounds the
	// subscription call only.
	Watch(ctx context.Context, key string) (Watch, error)
}

// Watch is a subscription to releases of one key, returned by
// [Waiter.Watch].
type Watch interface {
	// Released returns a channel that receives a value after key may have
	// been released. Wake-ups may be spurious, and several releases may be
	// reported as one. The channel is never closed.
	Released() <-chan struct{}

	// Close ends the subscription. The core calls it in the background,
	// once the waiting call has returned, so it may take its time (a hung
	// node's unsubscription, say), but it must end.
	Close() error
}

// Pinger is implemented by a [Conn] that can check that its backend is
// reachable. Without it, lock.Client.Ping only makes sure a connection was
// established.
type Pinger interface {
	// Ping checks that the backend answers.
	Ping(ctx context.Context) error
}

// Inspector is implemented by a [Conn] that can report who holds a key.
type Inspector interface {
	// Inspect reports the current holder of key. If nobody holds it, it
	// returns held == false and a nil error.
	Inspect(ctx context.Context, key string) (h Holder, held bool, err error)
}

// Dropper is implemented by a [Conn] whose DSN names a namespace of its
// own, such as a table, a collection, a key prefix, a chroot or a bucket.
// Tests and tools that work in a scratch namespace drop it when they end.
// Without it, what they leave stays until its TTL runs out, and the
// namespace stays.
type Dropper interface {
	// Drop deletes the namespace and every key in it, held or not. Locks
	// on it are lost. It is for scratch namespaces only: where the DSN
	// names none of its own (the default table, the whole keyspace), it
	// deletes nothing and returns an error matching ErrMisconfigured.
	// Calling it again succeeds. Tokens may start again in a namespace
	// of the same name made later, so a dropped name is not for reuse.
	Drop(ctx context.Context) error
}

// ScratchLister is implemented by a [Dropper] that can list the
// namespaces of its own kind whose names begin with a prefix. A tool that
// works in scratch namespaces uses it to find, and drop, those that an
// earlier run of its own left behind when it was killed.
type ScratchLister interface {
	// ListScratch returns the names of the namespaces of the connection's
	// kind (tables, collections, key prefixes, chroots, buckets) that
	// begin with prefix, sorted, each as the DSN's parameter names it. The
	// connection's own namespace is among them if it exists in the
	// backend. The name of a key-prefix namespace ends at the first '/'
	// after prefix, which it includes ("distlock-verify/abc/"), and such a
	// namespace exists while a key under it does. ListScratch only reads,
	// and never looks beyond prefix. It returns an error matching
	// ErrMisconfigured for an empty prefix.
	ListScratch(ctx context.Context, prefix string) ([]string, error)
}

// SettingsChecker is implemented by a [Conn] that can read its backend's
// settings and judge them against the promises the library makes: a lock
// is held by one holder at a time, and its tokens grow. It reads what the
// backend says of itself and changes nothing.
type SettingsChecker interface {
	// CheckSettings returns what it found wrong or weak, most severe
	// first, and an empty slice for a deployment it finds safe. Its error
	// is for a check it could not make at all (no server answered); a
	// setting it could not read on one server is a finding.
	CheckSettings(ctx context.Context) ([]Finding, error)
}

// Severity grades a [Finding].
type Severity int

const (
	// Warning: the promises hold as long as nothing more fails than the
	// deployment was built for, or a weaker promise holds (a restart may
	// lose locks, say). The user should know, and may accept it.
	Warning Severity = iota + 1

	// Error: a promise can break with nothing else failing, such as an
	// eviction policy that may evict lock keys, or a replica given as a
	// master.
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "Severity(" + strconv.Itoa(int(s)) + ")"
}

// A Finding is one setting of a backend that weakens the promises.
type Finding struct {
	Severity Severity

	// Rule names the check, short and stable, such as
	// "redis-maxmemory-policy", so that a tool can allow a known one.
	Rule string

	// Server is the server the finding is about (an address, never
	// credentials), or "" for the deployment as a whole.
	Server string

	// Problem says, in one line, what can go wrong.
	Problem string

	// Fix says, in one line, what to change.
	Fix string
}

// String returns the finding on one line.
func (f Finding) String() string {
	s := f.Severity.String() + ": " + f.Rule
	if f.Server != "" {
		s += " (" + f.Server + ")"
	}
	return s + ": " + f.Problem + "; " + f.Fix
}

// DialFunc dials a server, as [net.Dialer.DialContext] does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// DialerDriver is implemented by a [Driver] whose every connection to a
// server can go through a dialer of the caller's, including connections to
// servers the client library discovers itself. Fault injection uses it to
// slow, stall or cut connections below the client library. Without it,
// faults can be injected only by a proxy that the DSN names.
type DialerDriver interface {
	// OpenConnectorDialer is OpenConnector, with every connection dialed
	// by dial.
	OpenConnectorDialer(dsn string, dial DialFunc) (Connector, error)
}

// Holder describes the holder of a key, as reported by [Inspector.Inspect].
type Holder struct {
	// Value is the holder's value.
	Value string

	// TTL is the time left on the holder's lease, by the backend's clock.
	TTL time.Duration

	// Lease is the holder's fencing token, where the backend keeps one.
	Lease Lease
}
