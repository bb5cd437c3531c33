package postgres_test

import (
	"testing"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/postgres"
)

func FuzzOpenConnector_neverShowsPassword(f *testing.F) {
	secrettest.FuzzDSN(f, postgres.Driver{}, "postgres",
		[5]string{"postgres", "s3cr3t-pw", "127.0.0.1:55432", "/distlock", "sslmode=disable"},
		[5]string{"app", "p@ss/w#rd?x", "db1:5432,db2:5432", "/app", "distlock_table=app.locks"},
		[5]string{"u", "long-password-123", "h:notaport", "/d", "distlock_table=1bad"},
		[5]string{"u", "another-secret", "h", "/d", "distlock_unknown=1&pool_max_conns=x"},
	)
}

func FuzzOpenConnector_neverPanics(f *testing.F) {
	secrettest.FuzzRawDSN(f, postgres.Driver{}, "postgres://u:pw@h/d", "host=h password='x y' dbname=d", "postgres://[::1", "password=", "distlock_table=a.b.c")
}
