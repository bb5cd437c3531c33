package zookeeper_test

import (
	"testing"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/zookeeper"
)

func FuzzOpenConnector_neverShowsPassword(f *testing.F) {
	secrettest.FuzzDSN(f, zookeeper.Driver{}, "zk",
		[5]string{"u", "s3cr3t-pw", "127.0.0.1:2181", "/", "session_timeout=5s"},
		[5]string{"app", "p@ss/w#rd?x", "h1:2181,h2,[::1]:2181", "/app/locks", "request_timeout=2s&member_timeout=1s"},
		[5]string{"u", "long-password-123", "h:notaport", "/", "max_sessions=0"},
		[5]string{"u", "another-secret", "h", "/zookeeper", "unknown=1"},
		[5]string{"u", "yet-another-secret", "h", "/a/../b", "session_timeout=soon"},
	)
}

func FuzzOpenConnector_neverPanics(f *testing.F) {
	secrettest.FuzzRawDSN(f, zookeeper.Driver{}, "zk://u:pw@h:2181,h2/chroot?session_timeout=1s", "zk://", "zk://[::1", "zk://h?request_timeout=soon", "zk://:@,,?=&", "zk://h/%zz", "zk://h//")
}
