package nats

import (
	"context"
	"errors"
	"fmt"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/driver/dsn"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errTimedOut is the cause of a call's context that ran out of the
// driver's request timeout.
var errTimedOut = errors.New("no answer within the request timeout")

// errClosed is returned by a connection's calls after Close.
var errClosed = errors.New("connection closed")

// refusals are the answers that retrying cannot change: credentials or
// permissions the servers refuse, an account without JetStream, TLS that
// one side requires and the other lacks.
var refusals = []error{
	nats.ErrAuthorization,
	nats.ErrAuthExpired,
	nats.ErrAuthRevoked,
	nats.ErrAccountAuthExpired,
	nats.ErrPermissionViolation,
	nats.ErrSecureConnRequired,
	nats.ErrSecureConnWanted,
	nats.ErrNkeysNotSupported,
	jetstream.ErrJetStreamNotEnabled,
	jetstream.ErrJetStreamNotEnabledForAccount,
	errRefused,
}

// errRefused marks a bucket that cannot serve locks (see check).
var errRefused = errors.New("the bucket cannot serve locks")

// unavailable are the failures to reach a server or a stream leader that
// retrying may fix.
var unavailable = []error{
	errTimedOut,
	nats.ErrNoServers,
	nats.ErrTimeout,
	nats.ErrNoResponders,
	nats.ErrConnectionReconnecting,
	nats.ErrReconnectBufExceeded,
	nats.ErrStaleConnection,
	nats.ErrDisconnected,
	jetstream.ErrNoStreamResponse,
	jetstream.ErrNoHeartbeat,
	errClosed,
}

func isAny(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// fail names the operation op in err, a failure of a call under ctx
// (bounded by the request timeout), marks it, and takes secrets out of its
// message: driver.ErrMisconfigured for a refusal, driver.ErrUnavailable
// when no server or stream leader answered within the driver's timeouts.
func fail(ctx context.Context, op string, err error, secrets ...string) error {
	var mark error
	switch {
	case errors.Is(err, driver.ErrMisconfigured), errors.Is(err, driver.ErrUnavailable):
	case isAny(err, refusals):
		mark = driver.ErrMisconfigured
	case errors.Is(context.Cause(ctx), errTimedOut):
		mark = driver.ErrUnavailable
		if !errors.Is(err, errTimedOut) {
			err = fmt.Errorf("%w: %w", errTimedOut, err)
		}
	case ctx.Err() != nil:
		err = fmt.Errorf("%w (last: %w)", context.Cause(ctx), err)
	case isAny(err, unavailable), unavailableAPI(err):
		mark = driver.ErrUnavailable
	}
	if hidden := redacted(err, secrets); hidden != nil {
		err = hidden
	}
	if mark != nil {
		return fmt.Errorf("nats: %s: %w: %w", op, mark, err)
	}
	return fmt.Errorf("nats: %s: %w", op, err)
}

// redacted returns err with its secrets taken out of its message, keeping
// the marks it matches, or nil if it quotes none.
func redacted(err error, secrets []string) error {
	msg := err.Error()
	clean := dsn.Redact(msg, secrets...)
	if clean == msg {
		return nil
	}
	var marks []error
	for _, t := range append(append([]error{context.DeadlineExceeded, context.Canceled}, refusals...), unavailable...) {
		if errors.Is(err, t) {
			marks = append(marks, t)
		}
	}
	return &redactedError{msg: clean, marks: marks}
}

// redactedError is an error whose message had secrets in it.
type redactedError struct {
	msg   string
	marks []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.marks }

// wrongSequence reports whether err is the stream's refusal of a write
// whose expected last sequence of the subject did not hold.
func wrongSequence(err error) bool {
	var ae *jetstream.APIError
	if !errors.As(err, &ae) {
		return false
	}
	return ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// unavailableAPI reports whether err is the JetStream API's answer that
// it is temporarily unavailable (no leader, no quorum).
func unavailableAPI(err error) bool {
	var ae *jetstream.APIError
	return errors.As(err, &ae) && ae.Code == 503
}
