package postgres_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/postgres"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, postgres.Driver{}, dsntest.Seeds{
		Scheme: "postgres",
		URLs: [][5]string{
			{"postgres", "s3cr3t-pw", "127.0.0.1:55432", "/distlock", "sslmode=disable"},
			{"app", "p@ss/w#rd?x", "db1:5432,db2:5432", "/app", "distlock_table=app.locks"},
			{"u", "long-password-123", "h:notaport", "/d", "distlock_table=1bad"},
			{"u", "another-secret", "h", "/d", "distlock_unknown=1&pool_max_conns=x"},
		},
		Raw: []string{"postgres://u:pw@h/d", "host=h password='x y' dbname=d", "postgres://[::1", "password=", "distlock_table=a.b.c"},
	})
}
