module github.com/distlock/lock/bench

go 1.26.0

require (
	github.com/distlock/lock v0.0.0
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/gomodule/redigo v1.9.3
	github.com/redis/go-redis/v9 v9.23.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

require (
	github.com/distlock/lock/drivers/goredis v0.0.0
	github.com/distlock/lock/drivers/redigo v0.0.0
)

replace (
	github.com/distlock/lock => ..
	github.com/distlock/lock/drivers/goredis => ../drivers/goredis
	github.com/distlock/lock/drivers/redigo => ../drivers/redigo
)
