package pgguard

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/distlock/lock/internal/pgtable"
)

// DefaultTable is the fence table's name when [Config] names none.
const DefaultTable = "distlock_fences"

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
	ident, err := pgtable.Quote(name)
	if err != nil {
		return nil, fmt.Errorf("pgguard: %w", err)
	}
	t := &table{name: name, ident: ident}
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

// ensure makes sure the table exists, creating it if create is set.
func (t *table) ensure(ctx context.Context, pool *pgxpool.Pool, create bool) error {
	stmt := ""
	if create {
		stmt = t.create
	}
	err := pgtable.Ensure(ctx, pool, t.ident, stmt)
	switch {
	case errors.Is(err, pgtable.ErrMissing):
		return fmt.Errorf("pgguard: table %s does not exist, and Config.NoCreate forbids creating it", t.name)
	case err != nil:
		return fmt.Errorf("pgguard: table %s: %w", t.name, err)
	}
	return nil
}
