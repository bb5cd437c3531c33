package mongodb_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/mongodb"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, mongodb.Driver{}, dsntest.Seeds{
		Scheme: "mongodb",
		URLs: [][5]string{
			{"u", "s3cr3t-pw", "127.0.0.1:27017", "/", "distlock_database=app"},
			{"app", "p@ss/w#rd?x", "db1,db2", "/app", "replicaSet=rs0&w=majority"},
			{"u", "long-password-123", "h:notaport", "/d", "distlock_collection=1bad"},
			{"u", "another-secret", "h", "/d", "distlock_unknown=1&authMechanism=SCRAM-SHA-256"},
		},
		Raw: []string{"mongodb://u:pw@h/d", "mongodb+srv://h/d", "mongodb://[::1", "mongodb://h/?distlock_prune=maybe"},
	})
}
