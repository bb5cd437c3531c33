package mysql_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/internal/secrettest"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
)

const secret = secrettest.Password

// A malformed DSN is refused at Open, with an error that says what is
// wrong and shows no password.
func TestOpen_badDSN(t *testing.T) {
	for _, tc := range []struct{ name, dsn, want string }{
		{"badTableName", "u:" + secret + "@tcp(h)/db?distlock_table=bad-name", "distlock_table"},
		{"tableNameWithQuote", "u:" + secret + "@tcp(h)/db?distlock_table=a%60b", "distlock_table"},
		{"tableNameTooLong", "u:" + secret + "@tcp(h)/db?distlock_table=" + strings.Repeat("t", 65), "64"},
		{"emptyTableName", "u:" + secret + "@tcp(h)/db?distlock_table=", "distlock_table is empty"},
		{"badCreateFlag", "u:" + secret + "@tcp(h)/db?distlock_create_table=maybe", "true or false"},
		{"badTimeout", "u:" + secret + "@tcp(h)/db?distlock_request_timeout=0s", "positive duration"},
		{"unknownParameter", "u:" + secret + "@tcp(h)/db?distlock_tabel=locks", "unknown parameter"},
		{"twice", "u:" + secret + "@tcp(h)/db?distlock_table=a&distlock_table=b", "2 times"},
		{"badEscape", "u:" + secret + "@tcp(h)/db?distlock_table=%zz", "percent-encoding"},
		{"unterminatedAddress", "u:" + secret + "@tcp(h/db", "no server"},
		{"badBool", "u:" + secret + "@tcp(h)/db?parseTime=maybe", "invalid bool"},
		{"badDBName", "u:" + secret + "@tcp(h)/d%zzb", "database name"},
		{"unknownTLSConfig", "u:" + secret + "@tcp(h)/db?tls=nosuchconfig", "TLS configuration"},
		{"autocommitOff", "u:" + secret + "@tcp(h)/db?autocommit=0", "autocommit"},
	} {
		t.Run(tc.name, func(t *testing.T) { openRefused(t, tc.dsn, tc.want) })
	}
}

// openRefused checks that lock.Open refuses dsn with a *lock.Error of op
// open that says each of wants and shows no password.
func openRefused(t *testing.T, dsn string, wants ...string) {
	t.Helper()
	c, err := lock.Open("mysql", dsn)
	if err == nil {
		c.Close()
		t.Fatal("lock.Open succeeded, want an error")
	}
	t.Logf("error: %v", err)
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q", want)
		}
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), secret) {
		t.Errorf("the error repeats the password: %v", err)
	}
	var le *lock.Error
	if !errors.As(err, &le) || le.Op != "open" {
		t.Errorf("error %v is not a *lock.Error of op open", err)
	}
}

// A DSN that names no server (no net(address), an empty address or host)
// or no database is refused at Open, rather than connecting to
// go-sql-driver's default of 127.0.0.1:3306.
func TestOpen_noServer(t *testing.T) {
	for _, tc := range []struct{ name, dsn, want string }{
		{"empty", "", "empty"},
		{"blank", "  ", "empty"},
		{"onlySlash", "/", "no server"},
		{"noAddress", "u:" + secret + "@/db", "no server"},
		{"netWithoutAddress", "u:" + secret + "@tcp/db", "no server"},
		{"emptyAddress", "u:" + secret + "@tcp()/db", "no server address"},
		{"onlyPort", "u:" + secret + "@tcp(:3306)/db", "no host"},
		{"noDatabase", "u:" + secret + "@tcp(h:3306)/", "no database"},
		{"noDatabaseWithParams", "u:" + secret + "@tcp(h:3306)/?parseTime=true", "no database"},
		{"noSlash", "u:" + secret + "@tcp(h:3306)", "no '/'"},
		{"onlyOurParams", "/?distlock_table=locks", "no server"},
		{"url", "mysql://u:" + secret + "@h:3306/db", "no server"},
	} {
		t.Run(tc.name, func(t *testing.T) { openRefused(t, tc.dsn, tc.want, "@tcp(host:3306)/dbname") })
	}
	for _, dsn := range []string{
		"u@tcp(h)/db",
		"u:p@tcp([::1]:3307)/db?parseTime=true&distlock_table=Locks",
		"u@unix(/run/mysqld/mysqld.sock)/db",
		"tcp(h:3306)/db",
	} {
		if _, err := (mysqldriver.Driver{}).OpenConnector(dsn); err != nil {
			t.Errorf("OpenConnector(%q): %v", dsn, err)
		}
	}
}

// The connector prints network, address, database, user and table, and
// never the password.
func TestConnector_String(t *testing.T) {
	dsntest.Printed(t, mysqldriver.Driver{}, secret, map[string]string{
		"app:" + secret + "@tcp(10.0.0.1)/db?distlock_table=locks":     "mysql(tcp(10.0.0.1:3306) database=db user=app table=locks)",
		"app:" + secret + "@unix(/run/mysqld.sock)/app?tls=false":      "mysql(unix(/run/mysqld.sock) database=app user=app table=distlock_leases)",
		"app:" + secret + "@tcp([::1]:3307)/db?interpolateParams=true": "mysql(tcp([::1]:3307) database=db user=app table=distlock_leases)",
	})
	if got, want := fmt.Sprint(&mysqldriver.Connector{}), "mysql(table=)"; got != want {
		t.Errorf("a zero Connector: got %s, want %s", got, want)
	}
}

func TestNew_nilPool(t *testing.T) {
	if _, err := mysqldriver.New(nil, mysqldriver.Config{}); err == nil {
		t.Error("New(nil) succeeded")
	}
}

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, mysqldriver.Driver{}, dsntest.Seeds{
		Scheme: "mysql",
		URLs: [][5]string{
			{"app", "s3cr3t-pw", "db1:3306", "/distlock", "distlock_table=locks&parseTime=x"},
		},
		Raw: []string{
			"app:s3cr3t-pw@tcp(h:3306)/db?distlock_table=a.b",
			"app:p/w@tcp(h)",
			"app:p@ss@tcp(h)/db?tls=nosuch",
			"app:pw@tcp(h)/db?distlock_request_timeout=1s&timeout=x",
			"@(",
			"u:pw@unix()/",
		},
	})
}
