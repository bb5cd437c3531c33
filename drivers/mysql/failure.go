package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	lockdriver "github.com/distlock/lock/driver"
	"github.com/go-sql-driver/mysql"
)

// errTimedOut is the cause of a call's context that ran out of the
// driver's request timeout.
var errTimedOut = errors.New("mysql: request timeout")

// errClosed is returned by a connection's methods after Close.
var errClosed = errors.New("mysql: connection closed")

// failure marks err, the failure of a call under ctx (bounded by the
// request timeout): as matching ErrMisconfigured if the server refused the
// configuration, as matching ErrUnavailable if the server did not answer
// within the request timeout or the connection broke, and as the
// backend's otherwise.
func failure(ctx context.Context, err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, lockdriver.ErrMisconfigured):
		return wrap(err)
	case misconfigured(err):
		return fmt.Errorf("mysql: %w: %w", lockdriver.ErrMisconfigured, err)
	case errors.Is(context.Cause(ctx), errTimedOut):
		return fmt.Errorf("mysql: %w: no answer within the request timeout of %v: %w", lockdriver.ErrUnavailable, timeout, err)
	case ctx.Err() == nil && broken(err):
		return fmt.Errorf("mysql: %w: %w", lockdriver.ErrUnavailable, err)
	}
	return wrap(err)
}

// misconfigured reports whether err is a refusal that retrying cannot
// fix: the server's (a wrong password, an unknown database, a missing
// privilege or table, an account that needs TLS) or the client's (an
// authentication method or TLS that go-sql-driver will not use).
func misconfigured(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1044, // ER_DBACCESS_DENIED_ERROR
			1045, // ER_ACCESS_DENIED_ERROR (a wrong password; REQUIRE SSL without TLS on MariaDB)
			1049, // ER_BAD_DB_ERROR
			1142, // ER_TABLEACCESS_DENIED_ERROR
			1143, // ER_COLUMNACCESS_DENIED_ERROR
			1146, // ER_NO_SUCH_TABLE
			1227, // ER_SPECIFIC_ACCESS_DENIED_ERROR
			1406, // ER_DATA_TOO_LONG (a value column narrower than the driver's)
			1251, // ER_NOT_SUPPORTED_AUTH_MODE
			1698, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
			3118, // MySQL: ER_ACCOUNT_HAS_BEEN_LOCKED
			3159, // MySQL: ER_SECURE_TRANSPORT_REQUIRED
			4151: // MariaDB: ER_ACCOUNT_HAS_BEEN_LOCKED
			return true
		}
		return false
	}
	for _, target := range []error{mysql.ErrNoTLS, mysql.ErrCleartextPassword, mysql.ErrNativePassword, mysql.ErrOldPassword, mysql.ErrUnknownPlugin} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// broken reports whether err says that the connection broke or could not
// be made, which retrying may fix.
func broken(err error) bool {
	var ne net.Error
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me):
		return me.Number == 1040 || me.Number == 1053 // too many connections; server shutdown in progress
	case errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne):
		return true
	}
	return false
}

// wrap marks err as the backend's.
func wrap(err error) error { return fmt.Errorf("mysql: %w", err) }
