package main

import (
	// The drivers the command knows. A new driver is one line here: its
	// import. Bench then measures it when named (--driver NAME --dsn DSN);
	// benchNamespaced needs a case only when bench must add a namespace
	// of its own to the DSN, and make demo (scripts/demo-bench.sh) a line
	// with its test server's DSN.
	_ "github.com/distlock/lock/drivers/etcd"      // registers "etcd"
	_ "github.com/distlock/lock/drivers/goredis"   // registers "goredis"
	_ "github.com/distlock/lock/drivers/memory"    // registers "memory"
	_ "github.com/distlock/lock/drivers/mongodb"   // registers "mongodb"
	_ "github.com/distlock/lock/drivers/mysql"     // registers "mysql"
	_ "github.com/distlock/lock/drivers/nats"      // registers "nats"
	_ "github.com/distlock/lock/drivers/postgres"  // registers "postgres"
	_ "github.com/distlock/lock/drivers/redigo"    // registers "redigo"
	_ "github.com/distlock/lock/drivers/rueidis"   // registers "rueidis"
	_ "github.com/distlock/lock/drivers/valkey"    // registers "valkey"
	_ "github.com/distlock/lock/drivers/zookeeper" // registers "zookeeper"
)
