package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5"
)

var _ driver.ScratchLister = (*conn)(nil)

// listScratch lists the tables (plain and partitioned) of schema $1, or
// of the current schema if $1 is NULL, whose names match the LIKE pattern
// $2. It reads pg_class, the catalog whose tables Drop drops and
// Connect's to_regclass finds, so views and other relations are left out.
const listScratch = `SELECT c.relname::text
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = coalesce($1::text, current_schema()) AND c.relkind IN ('r', 'p')
  AND c.relname LIKE $2::text ESCAPE '\'`

// ListScratch returns the tables whose names begin with prefix, sorted
// byte by byte: those of the current schema (the first of search_path
// that exists, where an unqualified table is created) for a prefix
// without '.', and those of schema s, each as "s.name", for a prefix
// "s.begin". Tables whose names the DSN cannot give (distlock_table takes
// letters, digits and '_') are left out. It refuses an empty prefix, and
// an empty beginning after a schema, with an error matching
// driver.ErrMisconfigured.
func (c *conn) ListScratch(ctx context.Context, prefix string) ([]string, error) {
	var schema *string
	begin := prefix
	if s, b, ok := strings.Cut(prefix, "."); ok {
		schema, begin = &s, b
	}
	if begin == "" {
		return nil, fmt.Errorf("postgres: list scratch tables: %w: the prefix %q names no beginning of a table name", driver.ErrMisconfigured, prefix)
	}
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err != nil {
		return nil, c.fail(&cl, err)
	}
	rows, err := cl.pc.Query(cl.ctx, listScratch, schema, likeEscape(begin)+"%")
	if err != nil {
		return nil, c.fail(&cl, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, c.fail(&cl, err)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if schema != nil {
			n = *schema + "." + n
		}
		if _, err := newTable(n); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// likeEscape escapes the characters that a LIKE pattern with ESCAPE '\'
// gives a meaning, so that the pattern matches s as written.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
