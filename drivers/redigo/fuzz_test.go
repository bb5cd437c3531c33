package redigo_test

import (
	"testing"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/redigo"
)

func FuzzOpenConnector_neverShowsPassword(f *testing.F) {
	secrettest.FuzzDSN(f, redigo.Driver{}, "redis",
		[5]string{"", "s3cr3t-pw", "127.0.0.1:7001", "/0", "node_timeout=50ms"},
		[5]string{"default", "p@ss/w#rd?x", "[::1]:7001", "", "fencing=true&key_prefix=x"},
		[5]string{"u", "pw-with-%2F", "host", "/x", "dial_timeout=bad"},
		[5]string{"u", "long-password-123", "h:notaport", "", "unknown=1"},
	)
}

func FuzzOpenConnector_neverPanics(f *testing.F) {
	secrettest.FuzzRawDSN(f, redigo.Driver{}, "redis://127.0.0.1:7001,redis://127.0.0.1:7002", "rediss://:pw@h:1?skip_verify=true", "redis://[::1", ",,", "redis://h?node_timeout=-1s")
}
