package zookeeper_test

import (
	"strings"
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/zookeeper"
)

func TestOpenConnector_parsesDSN(t *testing.T) {
	dsntest.Printed(t, zookeeper.Driver{}, "s3cr3t", map[string]string{
		"zk://h": `zookeeper(servers=h:2181 root="/distlock" session_timeout=10s request_timeout=5s member_timeout=1s max_sessions=8)`,
		"zk://a:1,b,[::1]:3/app/locks/?session_timeout=2500ms&request_timeout=2s&member_timeout=300ms&max_sessions=3": `zookeeper(servers=a:1,b:2181,[::1]:3 root="/app/locks" session_timeout=2.5s request_timeout=2s member_timeout=300ms max_sessions=3)`,
		"zk://app:s3cr3t-pw@h/x": `zookeeper(servers=h:2181 user=app root="/x" session_timeout=10s request_timeout=5s member_timeout=1s max_sessions=8)`,
		"zk://h/%E9%8D%B5":       `zookeeper(servers=h:2181 root="/鍵" session_timeout=10s request_timeout=5s member_timeout=1s max_sessions=8)`,
	})
}

func TestOpenConnector_refusesBadDSN(t *testing.T) {
	for _, dsn := range []string{
		"", "zookeeper://h", "zk://", "zk://h:0", "zk://h:x", "zk://h,,i", "zk://h/zookeeper", "zk://h/a/../b",
		"zk://h/a//b", "zk://h/%zz", "zk://:pw@h", "zk://h?session_timeout=0", "zk://h?session_timeout=soon",
		"zk://h?request_timeout=-1s", "zk://h?max_sessions=0", "zk://h?nope=1", "zk://h?session_timeout=1s&session_timeout=2s",
	} {
		if c, err := (zookeeper.Driver{}).OpenConnector(dsn); err == nil {
			t.Errorf("OpenConnector(%q) = %v, want an error", dsn, c)
		} else if !strings.HasPrefix(err.Error(), "zookeeper: invalid DSN") {
			t.Errorf("OpenConnector(%q) = %v, want an error starting with %q", dsn, err, "zookeeper: invalid DSN")
		}
	}
}

func TestOpenConnector_neverShowsPasswordInErrors(t *testing.T) {
	for _, dsn := range []string{
		"zk://u:s3cr3t-pw@h?nope=1", "zk://u:s3cr3t?pw@h?nope=1", "zk://u:s3cr3t/pw@h/zookeeper", "zk://u:s3cr3t-pw@h:x",
	} {
		_, err := zookeeper.Driver{}.OpenConnector(dsn)
		if err == nil {
			t.Errorf("OpenConnector(%q) succeeded", dsn)
		} else if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "pw") {
			t.Errorf("OpenConnector(%q) = %v: it shows the password", dsn, err)
		}
	}
}
