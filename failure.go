package lock

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/distlock/lock/driver"
)

// MaxUnavailable bounds how long a waiting [Client.Acquire] keeps trying
// while every attempt fails with an error matching [ErrUnavailable]. After
// that long without reaching the backend, the call ends with such an
// error, even if its context has no deadline. A wait that reaches the
// backend (and finds the key held, say) starts the count again.
// MaxUnavailable is long enough for a server to restart.
const MaxUnavailable = 10 * time.Second

// classify marks err, the failure of a driver call made under ctx, as
// matching ErrMisconfigured or ErrUnavailable where the driver did not and
// the standard library's errors in it say so.
func classify(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrMisconfigured):
		return err
	case driver.IsMisconfigured(err):
		// This case comes before ErrUnavailable, because a quorum driver's
		// error may be marked unavailable as a whole and hold a node's DNS
		// failure.
		return fmt.Errorf("%w: %w", ErrMisconfigured, err)
	case errors.Is(err, ErrUnavailable):
		return err
	case unreachable(ctx, err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// unreachable reports whether err says that the backend could not be
// reached. That is a refused connection, or a request that ran out of a
// deadline that was not ctx's (the driver's own request timeout).
func unreachable(ctx context.Context, err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &t) && t.Timeout()
}

// neverReached reports whether err, an acquisition's failure, proves that
// the request reached no server that could have set the key. That is so
// when the backend refused the call as misconfigured, or when every
// connection was refused. Such a failure needs no cleanup.
func neverReached(err error) bool {
	return errors.Is(err, ErrMisconfigured) || refusedEverywhere(err)
}

// refusedEverywhere reports whether every branch of err's tree ends in a
// refused connection. A quorum driver's error joins one error per node,
// so each node's branch is checked. The ErrUnavailable that marks a branch
// does not count as a branch.
func refusedEverywhere(err error) bool {
	for {
		switch u := err.(type) {
		case nil:
			return false
		case interface{ Unwrap() []error }:
			refused := false
			for _, e := range u.Unwrap() {
				if e == ErrUnavailable {
					continue // a mark, not a branch
				}
				if !refusedEverywhere(e) {
					return false
				}
				refused = true
			}
			return refused
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return errors.Is(err, syscall.ECONNREFUSED)
		}
	}
}
