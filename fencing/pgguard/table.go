package pgguard

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultTable is the fence table's name when [Config] names none.
const DefaultTable = "distlock_fences"

// maxIdentifier is the longest part of a table name accepted, in bytes:
// PostgreSQL silently truncates longer identifiers, so that two long names
// could be one table.
const maxIdentifier = 63

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// table is a validated fence table name and the statements on it. The name
// is spliced into SQL text only after validation, and then quoted;
// resources and tokens travel as bind parameters.
type table struct {
	name  string // as configured: "fences" or "schema.fences"
	ident string // the name quoted as an identifier

	create, admit string
}

// newTable validates name ("" means DefaultTable) and prepares the
// statements on the table it names.
func newTable(name string) (*table, error) {
	if name == "" {
		name = DefaultTable
	}
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return nil, fmt.Errorf("pgguard: table name %.80q has more than one '.': give a table, or schema.table", name)
	}
	for _, p := range parts {
		if len(p) > maxIdentifier {
			return nil, fmt.Errorf("pgguard: table name %.80q has a part of %d bytes, over PostgreSQL's %d", name, len(p), maxIdentifier)
		}
		if !identifier.MatchString(p) {
			return nil, fmt.Errorf("pgguard: table name %.80q is not an identifier (letters, digits and '_', not starting with a digit), or schema.identifier", name)
		}
	}
	t := &table{name: name, ident: pgx.Identifier(parts).Sanitize()}
	t.create = `CREATE TABLE IF NOT EXISTS ` + t.ident + ` (
	resource text COLLATE "C" PRIMARY KEY,
	token    bigint NOT NULL CHECK (token > 0)
)`
	// Admit raises the resource's fence to the token unless it is higher,
	// and returns the fence as it now is, under the row lock that ON
	// CONFLICT takes (or the new row's), held until the transaction ends.
	t.admit = `INSERT INTO ` + t.ident + ` AS f (resource, token) VALUES ($1, $2)
ON CONFLICT (resource) DO UPDATE SET token = GREATEST(f.token, EXCLUDED.token)
RETURNING token`
	return t, nil
}

// ensure makes sure the table exists, creating it if create is set. It
// leaves an existing table alone without asking for the right to create
// one, and tolerates creators racing each other.
func (t *table) ensure(ctx context.Context, pool *pgxpool.Pool, create bool) error {
	exists, err := t.exists(ctx, pool)
	switch {
	case err != nil:
		return fmt.Errorf("pgguard: looking for table %s: %w", t.name, err)
	case exists:
		return nil
	case !create:
		return fmt.Errorf("pgguard: table %s does not exist, and Config.NoCreate forbids creating it", t.name)
	}
	if _, err := pool.Exec(ctx, t.create); err != nil {
		// CREATE TABLE IF NOT EXISTS is not atomic: of creators racing each
		// other, all but one may fail once the winner has committed.
		if exists, _ := t.exists(ctx, pool); exists {
			return nil
		}
		return fmt.Errorf("pgguard: creating table %s: %w", t.name, err)
	}
	return nil
}

// exists reports whether the table exists.
func (t *table) exists(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	var exists bool
	err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgx.QueryExecModeSimpleProtocol, t.ident).Scan(&exists)
	return exists, err
}
