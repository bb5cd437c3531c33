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
			{"postgres", "s3cr3t-pw", "db1:5432,db2:5432", "/distlock", "sslmode=disable&distlock_table=app.locks&pool_max_conns=x"},
		},
		Raw: []string{"host=h password='x y' dbname=d", "password=", "distlock_table=a.b.c"},
	})
}
