package mysql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/distlock/lock/driver"
)

var _ driver.ScratchLister = (*conn)(nil)

// listScratch lists the base tables of the connection's database whose
// names match the LIKE pattern ?, with '|' as its escape character (a
// backslash would mean one thing or two, by the server's sql_mode).
const listScratch = "SELECT `table_name` FROM information_schema.tables\n" +
	"WHERE `table_schema` = DATABASE() AND `table_type` = 'BASE TABLE' AND `table_name` LIKE ? ESCAPE '|'"

// ListScratch returns the tables of the DSN's database whose names begin
// with prefix, sorted byte by byte. Tables whose names the DSN cannot give
// (distlock_table takes letters, digits and '_') are left out. It reads
// information_schema, whose LIKE may ignore case (MariaDB's does), so the
// names are compared again, exactly. It refuses an empty prefix with an
// error matching driver.ErrMisconfigured.
func (c *conn) ListScratch(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("mysql: list scratch tables: %w: empty prefix", driver.ErrMisconfigured)
	}
	ctx, done := c.request(ctx)
	defer done()
	rows, err := c.db.QueryContext(ctx, listScratch, likeEscape(prefix)+"%")
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, c.fail(ctx, err)
		}
		if _, err := newTable(n); err == nil && strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, c.fail(ctx, err)
	}
	slices.Sort(names)
	return names, nil
}

// likeEscape escapes the characters that a LIKE pattern with ESCAPE '|'
// gives a meaning, so that the pattern matches s as written.
func likeEscape(s string) string {
	return strings.NewReplacer(`|`, `||`, `%`, `|%`, `_`, `|_`).Replace(s)
}
