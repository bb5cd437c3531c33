// Package pgtable validates the names of the PostgreSQL tables that the
// module creates (the postgres driver's lease table, pgguard's fence
// table) and makes sure such a table exists, written once for both.
package pgtable

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// MaxIdentifier is the longest identifier accepted, in bytes: PostgreSQL
// silently truncates longer ones, so that two long names could be one
// table.
const MaxIdentifier = 63

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Quote checks that name is a table name the module accepts ("table" or
// "schema.table", each part letters, digits and '_', not starting with a
// digit, at most MaxIdentifier bytes) and returns it quoted, to be spliced
// into SQL text. Its errors quote at most 80 bytes of the name.
func Quote(name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("table name %.80q has more than one '.': give a table, or schema.table", name)
	}
	for _, p := range parts {
		if len(p) > MaxIdentifier {
			return "", fmt.Errorf("table name %.80q has a part of %d bytes, over PostgreSQL's %d", name, len(p), MaxIdentifier)
		}
		if !identifier.MatchString(p) {
			return "", fmt.Errorf("table name %.80q is not an identifier (letters, digits and '_', not starting with a digit), or schema.identifier", name)
		}
	}
	return pgx.Identifier(parts).Sanitize(), nil
}

// Querier is what Ensure needs of a pool or a connection.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ErrMissing is Ensure's error for a table that does not exist and that it
// was not to create.
var ErrMissing = errors.New("does not exist")

// Ensure makes sure the table ident (as Quote returned it) exists,
// creating it with create (a CREATE TABLE IF NOT EXISTS statement) if it
// is missing and create is not empty. It leaves an existing table alone
// without asking for the right to create one, and tolerates creators
// racing each other.
func Ensure(ctx context.Context, db Querier, ident, create string) error {
	exists, err := Exists(ctx, db, ident)
	switch {
	case err != nil:
		return fmt.Errorf("looking for it: %w", err)
	case exists:
		return nil
	case create == "":
		return ErrMissing
	}
	if _, err := db.Exec(ctx, create); err != nil {
		// CREATE TABLE IF NOT EXISTS is not atomic: of creators racing each
		// other, all but one may fail (duplicate_table, or a duplicate in
		// the catalogs) once the winner has committed.
		if exists, _ := Exists(ctx, db, ident); exists {
			return nil
		}
		return fmt.Errorf("creating it: %w", err)
	}
	return nil
}

// Exists reports whether the table ident exists, in one round trip (the
// simple protocol spares preparing a statement used once).
func Exists(ctx context.Context, db Querier, ident string) (bool, error) {
	var exists bool
	err := db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgx.QueryExecModeSimpleProtocol, ident).Scan(&exists)
	return exists, err
}
