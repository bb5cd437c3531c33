package etcd_test

import (
	"fmt"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/etcd" // registers "etcd"
)

// A DSN names the cluster's members; lock.Open checks it without
// contacting them, and the client never shows the password.
func Example_dsn() {
	for _, dsn := range []string{
		"etcd://app:s3cret@10.0.0.1:2379,10.0.0.2,10.0.0.3?prefix=billing/locks/&request_timeout=3s",
		"etcd://10.0.0.1:2379?member_timeout=soon",
	} {
		if c, err := lock.Open("etcd", dsn); err != nil {
			fmt.Println(err)
		} else {
			fmt.Println(c)
			c.Close()
		}
	}
	// Output:
	// lock.Client(etcd(endpoints=http://10.0.0.1:2379,http://10.0.0.2:2379,http://10.0.0.3:2379 user=app prefix="billing/locks/" request_timeout=3s member_timeout=1s))
	// lock: open: driver "etcd": etcd: invalid DSN: member_timeout must be a positive duration such as 2s or 500ms
}
