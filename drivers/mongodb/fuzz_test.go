package mongodb_test

import (
	"testing"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/mongodb"
)

func FuzzOpenConnector_neverShowsPassword(f *testing.F) {
	secrettest.FuzzDSN(f, mongodb.Driver{}, "mongodb",
		[5]string{"u", "s3cr3t-pw", "127.0.0.1:27017", "/", "distlock_database=app"},
		[5]string{"app", "p@ss/w#rd?x", "db1,db2", "/app", "replicaSet=rs0&w=majority"},
		[5]string{"u", "long-password-123", "h:notaport", "/d", "distlock_collection=1bad"},
		[5]string{"u", "another-secret", "h", "/d", "distlock_unknown=1&authMechanism=SCRAM-SHA-256"},
	)
}

func FuzzOpenConnector_neverPanics(f *testing.F) {
	secrettest.FuzzRawDSN(f, mongodb.Driver{}, "mongodb://u:pw@h/d", "mongodb+srv://h/d", "mongodb://[::1", "mongodb://h/?distlock_prune=maybe")
}
