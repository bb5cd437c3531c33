package etcd_test

import (
	"fmt"
	"log"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/etcd" // registers "etcd"
)

// A DSN names the cluster's members; lock.Open checks it without
// contacting them, and the client never shows the password.
func Example_dsn() {
	c, err := lock.Open("etcd", "etcd://app:s3cret@10.0.0.1:2379,10.0.0.2,10.0.0.3?prefix=billing/locks/&request_timeout=3s")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c)

	_, err = lock.Open("etcd", "etcd://10.0.0.1:2379?member_timeout=soon")
	fmt.Println(err)
	// Output:
	// lock.Client(etcd(endpoints=http://10.0.0.1:2379,http://10.0.0.2:2379,http://10.0.0.3:2379 user=app prefix="billing/locks/" request_timeout=3s member_timeout=1s))
	// lock: open: driver "etcd": etcd: invalid DSN: member_timeout must be a positive duration such as 2s or 500ms
}
