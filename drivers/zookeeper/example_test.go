package zookeeper_test

import (
	"fmt"
	"log"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/zookeeper" // registers "zookeeper"
)

// A DSN names the ensemble's members and the chroot the locks live under;
// lock.Open checks it without contacting them, and the client never shows
// the password.
func Example_dsn() {
	c, err := lock.Open("zookeeper", "zk://app:s3cret@10.0.0.1:2181,10.0.0.2,10.0.0.3/billing/locks?session_timeout=30s")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c)

	_, err = lock.Open("zookeeper", "zk://10.0.0.1:2181/zookeeper/locks")
	fmt.Println(err)
	// Output:
	// lock.Client(zookeeper(servers=10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181 user=app root="/billing/locks" session_timeout=30s request_timeout=5s member_timeout=1s max_sessions=8))
	// lock: open: driver "zookeeper": zookeeper: invalid DSN: chroot: /zookeeper is the server's own
}
