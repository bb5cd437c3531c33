package nats_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/nats"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, nats.Driver{}, dsntest.Seeds{
		Scheme: "nats",
		URLs: [][5]string{
			{"u", "s3cr3t-pw", "127.0.0.1:4222", "/", "bucket=locks&replicas=3&attempt_timeout=-1s"},
		},
		Raw: []string{"nats://u:pw@h:4222,h2/?bucket=x", "nats://tok@h?monitor=http://h:8222", "nats://h?bucket=a.b"},
	})
}
