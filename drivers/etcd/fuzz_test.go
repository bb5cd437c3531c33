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
			{"u", "s3cr3t-pw", "127.0.0.1:2379", "/", "prefix=app/&tls=true&member_timeout=-1s"},
		},
		Raw: []string{"etcd://u:pw@h:2379,h2/?prefix=x", "etcd://h/chroot?request_timeout=soon"},
	})
}
