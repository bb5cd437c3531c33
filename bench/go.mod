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
	golang.org/x/sys v0.50.0 // indirect
)

require (
	github.com/distlock/lock/drivers/goredis v0.0.0
	github.com/distlock/lock/drivers/redigo v0.0.0
	github.com/distlock/lock/drivers/rueidis v0.0.0
	github.com/distlock/lock/drivers/valkey v0.0.0
	github.com/redis/rueidis v1.0.80
	github.com/redis/rueidis/rueidiscompat v1.0.79
	github.com/valkey-io/valkey-go v1.0.80
	github.com/valkey-io/valkey-go/valkeycompat v1.0.79
)

replace (
	github.com/distlock/lock => ..
	github.com/distlock/lock/drivers/goredis => ../drivers/goredis
	github.com/distlock/lock/drivers/redigo => ../drivers/redigo
	github.com/distlock/lock/drivers/rueidis => ../drivers/rueidis
	github.com/distlock/lock/drivers/valkey => ../drivers/valkey
)

// redsync v4.18.1 requires valkeycompat v1.0.79 for its valkey-go adapter,
// and the module proxy refuses that version's zip (403, "not available",
// 2026-12-07); v1.0.77 is the nearest it serves. The adapter uses only its
// go-redis-like Get, Set, SetNX, PTTL, EvalSha, Eval and ScriptLoad.
replace github.com/valkey-io/valkey-go/valkeycompat v1.0.79 => github.com/valkey-io/valkey-go/valkeycompat v1.0.77
