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
			{"u", "s3cr3t-pw", "127.0.0.1:2181", "/", "session_timeout=5s"},
			{"app", "p@ss/w#rd?x", "h1:2181,h2,[::1]:2181", "/app/locks", "request_timeout=2s&member_timeout=1s"},
			{"u", "long-password-123", "h:notaport", "/", "max_sessions=0"},
			{"u", "another-secret", "h", "/zookeeper", "unknown=1"},
			{"u", "yet-another-secret", "h", "/a/../b", "session_timeout=soon"},
		},
		Raw: []string{"zk://u:pw@h:2181,h2/chroot?session_timeout=1s", "zk://", "zk://[::1", "zk://h?request_timeout=soon", "zk://:@,,?=&", "zk://h/%zz", "zk://h//"},
	})
}
