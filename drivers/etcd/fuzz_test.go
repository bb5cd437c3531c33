package etcd_test

import (
	"testing"

	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivers/internal/secrettest"
)

func FuzzOpenConnector_neverShowsPassword(f *testing.F) {
	secrettest.FuzzDSN(f, etcd.Driver{}, "etcd",
		[5]string{"u", "s3cr3t-pw", "127.0.0.1:2379", "/", "prefix=app/"},
		[5]string{"app", "p@ss/w#rd?x", "h1:2379,h2,[::1]:2379", "", "tls=true&dial_timeout=2s"},
		[5]string{"u", "long-password-123", "h:notaport", "/", "member_timeout=-1s"},
		[5]string{"u", "another-secret", "h", "/chroot", "unknown=1"},
	)
}

func FuzzOpenConnector_neverPanics(f *testing.F) {
	secrettest.FuzzRawDSN(f, etcd.Driver{}, "etcd://u:pw@h:2379,h2/?prefix=x", "etcd://", "etcd://[::1", "etcd://h?request_timeout=soon", "etcd://:@,,?=&")
}
