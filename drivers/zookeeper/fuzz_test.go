package zookeeper_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/zookeeper"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, zookeeper.Driver{}, dsntest.Seeds{
		Scheme: "zk",
		URLs: [][5]string{
			{"u", "s3cr3t-pw", "127.0.0.1:2181", "/app/locks", "session_timeout=5s&max_sessions=0"},
			{"u", "yet-another-secret", "h", "/a/../b", "session_timeout=soon"},
		},
		Raw: []string{"zk://u:pw@h:2181,h2/zookeeper?session_timeout=1s", "zk://h//"},
	})
}
