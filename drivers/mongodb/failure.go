package mongodb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/distlock/lock/driver"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/auth"
)

// The server's error codes that refuse the credentials or the identity.
const (
	codeUnauthorized         = 13
	codeAuthenticationFailed = 18
)

// begin returns the context of a call made under ctx, and the function
// that ends it. The call ends with ctx, after timeout, or, if r is not
// nil, when every server becomes unreachable.
func begin(ctx context.Context, timeout time.Duration, r *reach) (context.Context, func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	stop := func() bool { return false }
	if r != nil {
		stop = r.watch(cancel)
	}
	tctx, tcancel := context.WithTimeout(cctx, timeout)
	return tctx, func() {
		stop()
		tcancel()
		cancel(nil)
	}
}

// fail marks err, the failure of a call made under ctx that ran under
// cctx (see begin), as matching driver.ErrMisconfigured if the server
// refused the credentials or cannot be reached as configured (see
// wrongEnd), or driver.ErrUnavailable if the call ended for
// a reason of the driver's own (the request timeout, another deadline of
// the driver's, servers that cannot be reached) or on a broken
// connection. A call that ctx ended is left to the core.
func fail(ctx, cctx context.Context, timeout time.Duration, err error) error {
	switch {
	case err == nil:
		return nil
	case badCredentials(err):
		return fmt.Errorf("%w: %w", driver.ErrMisconfigured, err)
	case ctx.Err() != nil:
		return err
	}
	var lost errUnreachable
	switch {
	case errors.As(context.Cause(cctx), &lost) && wrongEnd(lost.err):
		return fmt.Errorf("%w: mongodb: %w", driver.ErrMisconfigured, lost)
	case errors.As(context.Cause(cctx), &lost) && errors.As(err, new(sent)):
		// The write may have landed: keep the refusal out of the chain, so
		// that the core does not take the request for one that reached no
		// server.
		return fmt.Errorf("%w: mongodb: %v: %w", driver.ErrUnavailable, lost, err)
	case errors.As(context.Cause(cctx), &lost):
		return fmt.Errorf("%w: mongodb: %w", driver.ErrUnavailable, lost)
	case cctx.Err() != nil:
		return fmt.Errorf("%w: mongodb: no answer within the request timeout (%v): %w", driver.ErrUnavailable, timeout, err)
	case errors.Is(err, context.DeadlineExceeded) || mongo.IsTimeout(err) || mongo.IsNetworkError(err):
		return fmt.Errorf("%w: %w", driver.ErrUnavailable, err)
	}
	return err
}

// badCredentials reports whether err says that the server refused the
// credentials or the identity: an authentication handshake that failed
// on the server's answer rather than on the network, the codes
// Unauthorized and AuthenticationFailed, and FerretDB's PostgreSQL backend
// refusing its login (SQLSTATE class 28, as FerretDB v1 passes PLAIN
// credentials on to PostgreSQL).
func badCredentials(err error) bool {
	var ae *auth.Error
	if errors.As(err, &ae) && !transient(err) {
		return true
	}
	var ce mongo.CommandError
	if !errors.As(err, &ce) {
		return false
	}
	return ce.HasErrorCode(codeAuthenticationFailed) || ce.HasErrorCode(codeUnauthorized) ||
		strings.Contains(ce.Message, "(SQLSTATE 28")
}

// transient reports whether err holds a network failure or a timeout.
func transient(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// credentialsFirst returns the first of errs that badCredentials
// recognizes, else the first that is not nil: of two requests made at
// once, one may fail on the credentials and the other on the pool that
// failure cleared.
func credentialsFirst(errs ...error) error {
	for _, err := range errs {
		if err != nil && badCredentials(err) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// sent marks the failure of a write that may have reached the server.
type sent struct{ error }

func (s sent) Unwrap() error { return s.error }
