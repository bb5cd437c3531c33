package main

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver FerretDB's SQLite backend uses
)

// FerretDB v1.24.2's SQLite backend indexes _id as
// _ferretdb_sjson->"_id" (metadata/registry.go, indexesCreate) but pushes
// a filter {_id: v} down as _ferretdb_sjson->'$._id' = ?
// (backends/sqlite/collection.go, Query and DeleteAll). SQLite matches an
// expression index only to the same expression, so every find, update and
// delete by _id scans its whole collection: on a collection of 7,000
// documents a find by _id took 25ms, and the MongoDB driver's lock
// throughput on one busy key fell from 137/s to 35/s within a minute.
// MongoDB always finds a document by _id through its index.
//
// keepIDIndexes makes the stand-in do the same: every idIndexEvery, it
// gives each collection table of the SQLite databases in dir that lacks
// one an index on the expression FerretDB queries by. FerretDB knows
// nothing of these indexes: they do not show in listIndexes, and they go
// with their tables when collections are dropped.
func keepIDIndexes(ctx context.Context, dir string, logger *slog.Logger) {
	dbs := map[string]*sql.DB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	t := time.NewTicker(idIndexEvery)
	defer t.Stop()
	for {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sqlite"))
		for _, f := range files {
			db, ok := dbs[f]
			if !ok {
				u := url.URL{Scheme: "file", Path: f, RawQuery: "_pragma=busy_timeout(10000)"}
				var err error
				if db, err = sql.Open("sqlite", u.String()); err != nil {
					logger.Error("opening a database to index _id", "file", f, "err", err)
					continue
				}
				db.SetMaxOpenConns(1)
				dbs[f] = db
			}
			if err := indexIDs(ctx, db); err != nil && ctx.Err() == nil {
				logger.Warn("indexing _id", "file", f, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// idIndexEvery is how often keepIDIndexes looks for new collections: a
// collection is unindexed for at most about that long after its creation.
const idIndexEvery = 100 * time.Millisecond

// idIndexSuffix ends the names of the indexes keepIDIndexes creates.
const idIndexSuffix = "__distlock_id_path"

// indexIDs creates the missing _id path indexes of db's collection tables.
func indexIDs(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT t.name FROM sqlite_master t
WHERE t.type = 'table' AND t.name NOT LIKE '\_ferretdb\_%' ESCAPE '\' AND t.sql LIKE '%_ferretdb_sjson%'
AND NOT EXISTS (SELECT 1 FROM sqlite_master i WHERE i.type = 'index' AND i.tbl_name = t.name AND i.name = t.name || ?)`, idIndexSuffix)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range tables {
		q := `CREATE INDEX IF NOT EXISTS ` + quoteIdent(name+idIndexSuffix) + ` ON ` + quoteIdent(name) + ` (_ferretdb_sjson->'$._id')`
		if _, err := db.ExecContext(ctx, q); err != nil && !strings.Contains(err.Error(), "no such table") {
			return err // a table dropped meanwhile is no error
		}
	}
	return nil
}

// quoteIdent quotes s as an SQLite identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
