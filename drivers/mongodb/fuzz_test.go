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
			{"u", "s3cr3t-pw", "127.0.0.1:27017", "/app", "distlock_collection=1bad&replicaSet=rs0&authMechanism=SCRAM-SHA-256"},
		},
		Raw: []string{"mongodb://u:pw@h/d", "mongodb+srv://h/d", "mongodb://h/?distlock_prune=maybe"},
	})
}
