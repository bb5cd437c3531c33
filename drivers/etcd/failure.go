package etcd

import (
	"context"
	"errors"
	"fmt"

	"github.com/distlock/lock/driver"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/status"
)

// refusals are the cluster's answers to a client whose credentials or
// identity it does not accept: asking again gets the same.
var refusals = []error{
	rpctypes.ErrAuthFailed,       // a wrong user or password
	rpctypes.ErrPermissionDenied, // a user without a role that covers the prefix
	rpctypes.ErrInvalidAuthToken, // a token clientv3 could not renew
	rpctypes.ErrUserEmpty,        // no user, on a cluster with authentication
}

// refused reports whether err is one of the refusals, converted by
// clientv3 or as the gRPC status it came in.
func refused(err error) bool {
	for _, r := range refusals {
		if errors.Is(err, r) {
			return true
		}
	}
	var gs interface{ GRPCStatus() *status.Status }
	if errors.As(err, &gs) {
		msg := gs.GRPCStatus().Message()
		for _, r := range refusals {
			if msg == r.Error() {
				return true
			}
		}
	}
	return false
}

// mark marks err, the failure of a call made under the caller's ctx:
// with driver.ErrMisconfigured if the cluster refused the client's
// credentials, and with driver.ErrUnavailable if no member answered
// within the driver's own timeouts (not the caller's).
func mark(ctx context.Context, err error) error {
	switch {
	case refused(err):
		return fmt.Errorf("%w: %w", driver.ErrMisconfigured, err)
	case ctx.Err() != nil:
		return err
	case errors.Is(err, errRequestTimeout), errors.Is(err, errNoMember), transient(err):
		return fmt.Errorf("%w: %w", driver.ErrUnavailable, err)
	}
	return err
}

// wrap names the operation op in err, a failure of a call made under the
// caller's ctx, and marks it (see mark).
func wrap(ctx context.Context, op string, err error) error {
	return fmt.Errorf("etcd: %s: %w", op, mark(ctx, err))
}
