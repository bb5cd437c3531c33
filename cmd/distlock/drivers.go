package main

import (
	"cmp"
	"slices"
	"strings"

	"github.com/distlock/lock"

	// The drivers the command knows. A new driver is one line here: its
	// import. Bench then measures it too, on the DSN in
	// $DISTLOCK_<NAME>_DSN (which its scripts/services.d file exports), or
	// on --dsn-<name>. A row in benchDefaults below is needed only when
	// bench must add parameters of its own to that DSN.
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

// benchDefault is how bench finds a driver's test server when no
// --dsn-<name> flag names one.
type benchDefault struct {
	driver string
	// dsn returns the DSN from the environment getenv reads, else the
	// test server's, for the run named run.
	dsn func(getenv func(string) string, run string) string
	// help is the flag's line in bench's usage, after "default: ".
	help string
}

// benchDefaults are the drivers whose default DSN bench builds itself, in
// the table's order. Every other registered driver follows them, by name.
var benchDefaults = []benchDefault{
	{"memory", func(func(string) string, string) string { return benchMemoryStore }, ""},
	{"goredis", benchRedisDSN,
		"redis:// URLs of $DISTLOCK_REDIS_ADDRS, else 127.0.0.1:7001-7005 (N=5)"},
	{"redigo", benchRedisDSN, "as --dsn-goredis"},
	{"rueidis", benchRedisDSN, "as --dsn-goredis"},
	{"valkey", benchRedisDSN, "as --dsn-goredis"},
	{"postgres", func(getenv func(string) string, _ string) string {
		return benchWithParams(cmp.Or(getenv("DISTLOCK_POSTGRES_DSN"), benchPostgresDSN), benchPostgresParams)
	}, "$DISTLOCK_POSTGRES_DSN, else " + benchPostgresDSN + ",\nwith " + benchPostgresParams},
	{"mongodb", func(getenv func(string) string, run string) string {
		return benchWithParams(benchMongoBase(getenv), strings.Replace(benchMongoParams, "RUN", run, 1))
	}, "$DISTLOCK_MONGODB_URI, else " + benchMongoURI + ",\nwith " + benchMongoParams + " (dropped at the end)"},
	{"etcd", func(getenv func(string) string, _ string) string {
		hosts := cmp.Or(getenv("DISTLOCK_ETCD_ENDPOINTS"), benchEtcdHosts)
		hosts = strings.NewReplacer("http://", "", "https://", "").Replace(hosts)
		return "etcd://" + hosts + "?" + benchEtcdParams
	}, "etcd:// of $DISTLOCK_ETCD_ENDPOINTS, else " + benchEtcdHosts + ",\nwith " + benchEtcdParams},
	{"zookeeper", func(getenv func(string) string, _ string) string {
		return "zk://" + cmp.Or(getenv("DISTLOCK_ZOOKEEPER_SERVERS"), benchZKServers) + benchZKRoot
	}, "zk:// of $DISTLOCK_ZOOKEEPER_SERVERS, else " + benchZKServers + ",\nwith the chroot " + benchZKRoot},
}

// benchRedisDSN is the Redlock drivers' default: a redis:// URL per node.
func benchRedisDSN(getenv func(string) string, _ string) string {
	addrs := strings.Split(cmp.Or(getenv("DISTLOCK_REDIS_ADDRS"), benchRedisAddrs), ",")
	return "redis://" + strings.Join(addrs, ",redis://")
}

// benchDrivers returns the drivers bench measures, in the table's order:
// those of benchDefaults first, then every other registered driver by name.
func benchDrivers() []string {
	var out []string
	for _, d := range benchDefaults {
		out = append(out, d.driver)
	}
	for _, d := range lock.Drivers() {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// benchEnvDSN is the variable that holds driver d's DSN when it has no row
// in benchDefaults: DISTLOCK_MYSQL_DSN for "mysql".
func benchEnvDSN(d string) string {
	return "DISTLOCK_" + strings.ToUpper(d) + "_DSN"
}

// benchDefaultDSN returns the DSN bench uses for driver d when no --dsn flag
// names one, from the environment getenv reads, else the test servers',
// for the run named run. It is "" when neither names one.
func benchDefaultDSN(d string, getenv func(string) string, run string) string {
	for _, row := range benchDefaults {
		if row.driver == d {
			return row.dsn(getenv, run)
		}
	}
	return getenv(benchEnvDSN(d))
}

// benchDSNHelp returns the --dsn-<name> lines of bench's usage, one flag
// each, in the table's order.
func benchDSNHelp() string {
	var b strings.Builder
	for _, d := range benchDrivers()[1:] {
		help := "$" + benchEnvDSN(d) + " (bench skips the driver without one)"
		for _, row := range benchDefaults {
			if row.driver == d {
				help = row.help
			}
		}
		flag := "--dsn-" + d + " DSN"
		if len(flag) < 20 {
			flag += strings.Repeat(" ", 20-len(flag))
		} else {
			flag += " "
		}
		help = strings.ReplaceAll(help, "\n", "\n"+strings.Repeat(" ", 22))
		b.WriteString("  " + flag + "default: " + help + "\n")
	}
	return b.String()
}
