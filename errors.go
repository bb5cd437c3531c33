package lock

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/distlock/lock/driver"
)

// ErrNotAcquired means the key is held by someone else. [Client.TryAcquire]
// returns an error matching it when its one attempt found the key held. A
// waiting [Client.Acquire] returns one matching it (and the context's
// error) when its context ends while the key is still held. It is never
// used for an unreachable or failing backend.
var ErrNotAcquired = errors.New("held by another holder")

// ErrNotHeld means the lock is no longer held by this handle. It was
// released, it expired, or an extension came back too late to count.
// [Lock.Extend] and [Lock.Release] return errors matching it.
var ErrNotHeld = errors.New("lock is not held")

// ErrLost is the cause of the context that [Client.Do] gives its function
// when the lock is lost (an extension was refused or failed until validity
// ran out), and what Do returns when the lock was lost while the function ran.
var ErrLost = errors.New("lock lost")

// ErrMisconfigured means the backend refused the call for a reason that
// retrying cannot fix. Such reasons are wrong credentials, an identity the
// backend refuses, a TLS certificate or protocol mismatch, or a host name
// that does not resolve. [Client.Acquire] ends with it at once instead of
// waiting.
var ErrMisconfigured = driver.ErrMisconfigured

// ErrUnavailable means the backend could not be reached. Connections were
// refused, or it did not answer in time. Retrying may help. A waiting
// [Client.Acquire] keeps trying through it for at most [MaxUnavailable] in
// a row, and then ends with an error matching it, even if its context has
// no deadline.
var ErrUnavailable = driver.ErrUnavailable

// ErrClosed is returned by every operation on a [Client] that has been
// closed.
var ErrClosed = errors.New("client is closed")

// ErrInvalidKey is matched by errors for keys the library refuses. It
// refuses a key that is empty, longer than [MaxKeyLen] bytes, not valid
// UTF-8, or contains a NUL byte.
var ErrInvalidKey = errors.New("invalid key")

// ErrInvalidTTL is matched by errors for a TTL outside [MinTTL, MaxTTL].
var ErrInvalidTTL = errors.New("invalid TTL")

// ErrInvalidOption is matched by errors for a bad option, such as a nil or
// ill-formed retry strategy or a drift factor outside [0, 0.5).
var ErrInvalidOption = errors.New("invalid option")

// errTooLate marks an acquisition that the backend granted only after the
// lock's validity had already run out. Such a lock is released at once and
// the attempt counts as failed (it is retried like a backend error).
var errTooLate = errors.New("backend answered after the lock's validity had run out")

// Error is the error type of every failed operation of the package, except
// for panics on programming errors in [Register]. It records the operation
// and the key. Err is the cause. The cause matches this package's
// sentinels and keeps the backend's error reachable through errors.Is and
// errors.As.
type Error struct {
	Op  string // "acquire", "extend", "release", "do", "inspect", "ping", "close", "open"
	Key string // the lock's key, if the operation had one
	Err error
}

// maxKeyInError is how much of a key an error message quotes.
const maxKeyInError = 64

// Error returns "lock: OP "KEY": CAUSE", with a long key shortened.
func (e *Error) Error() string {
	s := "lock: " + e.Op
	if e.Key != "" {
		k := e.Key
		if len(k) > maxKeyInError {
			k = strings.ToValidUTF8(k[:maxKeyInError], "") + "..."
		}
		s += " " + strconv.Quote(k)
	}
	return s + ": " + cut(e.Err.Error(), maxCauseInError)
}

// maxCauseInError is how much of a cause an error message quotes. A
// driver's error may quote a host or a DSN that the caller made huge.
const maxCauseInError = 1024

// cut shortens s to at most n bytes of valid UTF-8, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "... (cut)"
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// translate turns a driver's error matching the driver's sentinel into one
// matching ours, keeping the driver's error reachable when it says more
// than the sentinel.
func translate(err, driverSentinel, ours error) error {
	if err == driverSentinel {
		return ours
	}
	return fmt.Errorf("%w: %w", ours, err)
}

func opError(op, key string, err error) error {
	return &Error{Op: op, Key: key, Err: err}
}
