package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/go-zookeeper/zk"
)

// timeoutError is the cause of a context that one of the driver's own
// timeouts ended. It matches context.DeadlineExceeded.
type timeoutError struct {
	what string // "request timeout", "dial timeout"
	d    time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within the %s (%v)", e.what, e.d)
}
func (e *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }
func (e *timeoutError) Timeout() bool        { return true }

// withTimeout returns ctx bounded by d too, naming the timeout what as its
// cause when d ends it.
func withTimeout(ctx context.Context, what string, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, &timeoutError{what, d})
}

// bound returns ctx bounded by the request timeout too, and ended by
// Close, with errClosed as its cause.
func (cn *conn) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := withTimeout(ctx, "request timeout", cn.c.cfg.RequestTimeout)
	ctx, cancelClosed := context.WithCancelCause(ctx)
	stop := context.AfterFunc(cn.ctx, func() { cancelClosed(errClosed) })
	return ctx, func() {
		stop()
		cancelClosed(nil)
		cancel()
	}
}

// mark marks err, the failure of a call made under the caller's ctx:
// with driver.ErrMisconfigured if the ensemble refused the client's
// identity (a node's ACL does not admit it), and with driver.ErrUnavailable
// if the ensemble did not answer within the driver's own timeouts (not the
// caller's).
func mark(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, errClosed):
		return err
	case errors.Is(err, zk.ErrNoAuth), errors.Is(err, zk.ErrAuthFailed):
		return fmt.Errorf("%w: %w (the ACL of the driver's nodes does not admit this client: check the DSN's user and password)",
			driver.ErrMisconfigured, err)
	case ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || retryable(err)):
		return fmt.Errorf("%w: %w", driver.ErrUnavailable, err)
	}
	return err
}

// wrap names the operation op in err, the failure of a call made under
// the caller's ctx, and marks it (see mark).
func wrap(ctx context.Context, op string, err error) error {
	return fmt.Errorf("zookeeper: %s: %w", op, mark(ctx, err))
}

// closing counts the sessions being closed in the background: those of
// calls that failed, which return without waiting for the ensemble to
// confirm the end of the session (up to a second, the client's wait).
var closing sync.WaitGroup

// closeLater closes s in the background.
func closeLater(s *session) { closing.Go(s.close) }
