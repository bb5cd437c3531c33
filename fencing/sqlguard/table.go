package sqlguard

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
)

// DefaultTable is the fence table's name when [Config] names none.
const DefaultTable = "distlock_fences"

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// table is a validated fence table name and the statements on it. The name
// is spliced into SQL text only after validation, and then quoted.
// Resources and tokens travel as bind parameters.
type table struct {
	d            *dialect
	name         string // as configured: "fences" or "schema.fences"
	schema, base string // its parts; schema is "" for the connection's own
	ident        string // the name quoted, as it is spliced into statements

	create, admit string
}

// newTable validates name ("" means DefaultTable) for d, and prepares the
// statements on the table it names.
func newTable(d *dialect, name string) (*table, error) {
	if name == "" {
		name = DefaultTable
	}
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return nil, fmt.Errorf("sqlguard: table name %.80q has more than one '.': give a table, or schema.table", name)
	}
	quoted := make([]string, len(parts))
	for i, p := range parts {
		if len(p) > d.maxIdent {
			return nil, fmt.Errorf("sqlguard: table name %.80q has a part of %d bytes, over %s's %d", name, len(p), d.name, d.maxIdent)
		}
		if !identifier.MatchString(p) {
			return nil, fmt.Errorf("sqlguard: table name %.80q is not an identifier (letters, digits and '_', not starting with a digit), or schema.identifier", name)
		}
		quoted[i] = d.quote(p)
	}
	t := &table{d: d, name: name, base: parts[len(parts)-1], ident: strings.Join(quoted, ".")}
	if len(parts) == 2 {
		t.schema = parts[0]
	}
	t.create = d.create(t.ident)
	t.admit = d.admit(t.ident)
	return t, nil
}

// ensure makes sure the table exists, creating it if create is set. It
// leaves an existing table alone, without asking for the right to create
// one, and tolerates creators racing each other.
func (t *table) ensure(ctx context.Context, db *sql.DB, create bool) error {
	exists, err := t.d.exists(ctx, db, t.schema, t.base)
	switch {
	case err != nil:
		return fmt.Errorf("sqlguard: table %s: %w", t.name, err)
	case exists:
		return nil
	case !create:
		return fmt.Errorf("sqlguard: table %s does not exist, and Config.NoCreate forbids creating it", t.name)
	}
	// The table is looked for again after CREATE, whether it failed or not.
	// PostgreSQL's CREATE TABLE IF NOT EXISTS is not atomic: of creators
	// racing each other, all but one may fail once the winner commits. And
	// MySQL without NO_ENGINE_SUBSTITUTION may make a table of an engine
	// other than the one asked for.
	_, createErr := db.ExecContext(ctx, t.create)
	exists, err = t.d.exists(ctx, db, t.schema, t.base)
	switch {
	case exists:
		return nil
	case createErr != nil:
		return fmt.Errorf("sqlguard: creating table %s: %w", t.name, createErr)
	case err != nil:
		return fmt.Errorf("sqlguard: table %s: %w", t.name, err)
	}
	return fmt.Errorf("sqlguard: table %s is missing after it was created", t.name)
}
