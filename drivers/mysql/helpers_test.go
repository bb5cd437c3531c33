package mysql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/go-sql-driver/mysql"
)

// ttl is the short lease the tests use where they wait for expiry: well
// above a round trip on a loaded machine.
const ttl = 500 * time.Millisecond

// server returns the test server's DSN, skipping the test without one.
func server(t testing.TB) string {
	t.Helper()
	return drivertest.Lookup(t, "DISTLOCK_MYSQL_DSN")
}

// admin returns a plain pool on the test database, closed when the test
// ends.
func admin(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// freshTable returns the name of a lease table no other test uses, and
// drops the table when the test ends.
func freshTable(t testing.TB, dsn string) string {
	t.Helper()
	name := "distlock_test_" + drivertest.RandomHex(6)
	t.Cleanup(func() { dropTable(t, dsn, name) })
	return name
}

// dropTable drops the table name of the DSN's database.
func dropTable(t testing.TB, dsn, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Errorf("dropping table %s: %v", name, err)
		return
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS `"+name+"`"); err != nil {
		t.Errorf("dropping table %s: %v", name, err)
	}
}

// withTable returns dsn with the driver's table parameter set to a fresh
// table.
func withTable(t testing.TB, dsn string, kv ...string) string {
	t.Helper()
	return drivertest.WithParams(dsn, append([]string{"distlock_table", freshTable(t, dsn)}, kv...)...)
}

// open opens a client on dsn, closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	return drivertest.Open(t, "mysql", dsn)
}

// config parses dsn with go-sql-driver, failing the test if it cannot.
func config(t testing.TB, dsn string) *mysql.Config {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
