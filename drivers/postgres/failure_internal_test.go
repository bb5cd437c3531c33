package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5/pgconn"
)

// A server shutting down or starting up makes a call fail as unavailable;
// a refused password as misconfigured; other server errors as neither.
func TestFailure_classes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		code string
		want error
	}{
		{"57P01", driver.ErrUnavailable},
		{"57P02", driver.ErrUnavailable},
		{"57P03", driver.ErrUnavailable},
		{"28P01", driver.ErrMisconfigured},
		{"23505", nil},
	} {
		// As pgx returns a failed connection: a PgError inside its error.
		err := failure(ctx, fmt.Errorf("failed to connect: %w", &pgconn.PgError{Code: c.code, Severity: "FATAL"}), time.Second)
		for _, class := range []error{driver.ErrUnavailable, driver.ErrMisconfigured} {
			if got := errors.Is(err, class); got != (class == c.want) {
				t.Errorf("SQLSTATE %s: errors.Is(%v, %v) = %v", c.code, err, class, got)
			}
		}
	}
}
