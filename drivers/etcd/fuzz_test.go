package etcd_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/etcd"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, etcd.Driver{}, dsntest.Seeds{
		Scheme: "etcd",
		URLs: [][5]string{
			{"u", "s3cr3t-pw", "127.0.0.1:2379", "/", "prefix=app/"},
			{"app", "p@ss/w#rd?x", "h1:2379,h2,[::1]:2379", "", "tls=true&dial_timeout=2s"},
			{"u", "long-password-123", "h:notaport", "/", "member_timeout=-1s"},
			{"u", "another-secret", "h", "/chroot", "unknown=1"},
		},
		Raw: []string{"etcd://u:pw@h:2379,h2/?prefix=x", "etcd://", "etcd://[::1", "etcd://h?request_timeout=soon", "etcd://:@,,?=&"},
	})
}
