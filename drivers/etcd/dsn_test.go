package etcd_test

import (
	"strings"
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/etcd"
)

func TestOpenConnector_parsesDSN(t *testing.T) {
	dsntest.Printed(t, etcd.Driver{}, "s3cr3t", map[string]string{
		"etcd://h": `etcd(endpoints=http://h:2379 prefix="distlock/" request_timeout=5s member_timeout=1s)`,
		"etcd://a:1,b,[::1]:3/?prefix=app/&request_timeout=2s&member_timeout=300ms&dial_timeout=1s": `etcd(endpoints=http://a:1,http://b:2379,http://[::1]:3 prefix="app/" request_timeout=2s member_timeout=300ms)`,
		"etcd://app:s3cr3t-pw@h?tls=true": `etcd(endpoints=https://h:2379 user=app prefix="distlock/" request_timeout=5s member_timeout=1s)`,
		"etcd://h?ca_file=/ca.pem":        `etcd(endpoints=https://h:2379 prefix="distlock/" request_timeout=5s member_timeout=1s)`,
		"etcd://h?request_timeout=500ms":  `etcd(endpoints=http://h:2379 prefix="distlock/" request_timeout=500ms member_timeout=500ms)`,
	})
}

func TestOpenConnector_refusesBadDSN(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"", `must start with "etcd://"`},
		{"http://h", `must start with "etcd://"`},
		{"etcd://", "host 1: empty"},
		{"etcd://h/app", "path after the hosts"},
		{"etcd://h:x", "port"},
		{"etcd://:s3cr3t-pw@h", "password without a user name"},
		{"etcd://u:s3cr3t?pw@h?nope=1", `unknown parameter "nope"`},
		{"etcd://h?prefix=", "prefix is empty"},
		{"etcd://h?member_timeout=0s", "member_timeout must be a positive duration"},
		{"etcd://h?tls=maybe", "tls must be true or false"},
		{"etcd://h?cert_file=/c.pem", "cert_file and key_file go together"},
		{"etcd://h?tls=false&ca_file=/ca.pem", "tls=false with TLS files"},
		{"etcd://h?prefix=a&prefix=b", "prefix given 2 times"},
	} {
		_, err := etcd.Driver{}.OpenConnector(tc.dsn)
		switch {
		case err == nil:
			t.Errorf("OpenConnector(%q) succeeded", tc.dsn)
		case !strings.HasPrefix(err.Error(), "etcd: invalid DSN: ") || !strings.Contains(err.Error(), tc.want):
			t.Errorf("OpenConnector(%q) = %v, want an invalid DSN that says %q", tc.dsn, err, tc.want)
		case strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "pw"):
			t.Errorf("OpenConnector(%q) = %v: it shows the password", tc.dsn, err)
		}
	}
}
