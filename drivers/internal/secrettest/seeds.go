package secrettest

import "github.com/distlock/lock/driver/dsn/dsntest"

// RedisSeeds are the first inputs of the Redis drivers' DSN fuzz tests.
var RedisSeeds = dsntest.Seeds{
	Scheme: "redis",
	URLs: [][5]string{
		{"", Password, "127.0.0.1:7001", "/0", "node_timeout=50ms"},
		{"default", "p@ss/w#rd?x", "[::1]:7001", "", "fencing=true&key_prefix=x"},
		{"u", "pw-with-%2F", "host", "/x", "dial_timeout=bad"},
		{"u", "long-password-123", "h:notaport", "", "unknown=1"},
		{"u", "another-secret", "h", "", "ca_file=&client_name="},
	},
	Raw: []string{"redis://127.0.0.1:7001,redis://127.0.0.1:7002", "rediss://:pw@h:1?skip_verify=true", "redis://[::1", ",,", "redis://h?node_timeout=-1s"},
}
