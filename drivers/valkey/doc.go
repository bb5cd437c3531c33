// Package valkey is the Redlock driver over valkey-go
// (github.com/valkey-io/valkey-go), registered as "valkey". It runs on
// Valkey and on Redis alike. The algorithm, its
// guarantees and its advice on restarts are in package
// [github.com/distlock/lock/drivers/redlock].
//
//	import _ "github.com/distlock/lock/drivers/valkey"
//
//	c, err := lock.Open("valkey", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379")
//
// The DSN is the goredis driver's: a comma-separated list of redis:// or
// rediss:// (TLS) URLs, one per independent master, here in valkey-go's URL
// syntax (valkey.ParseURL: user, password, database number, and
// dial_timeout, write_timeout, protocol, client_name as query parameters).
// The algorithm's own parameters (node_timeout, fencing, key_prefix; see
// redlock.ParseDSN) may be added to any URL, and on a rediss:// URL
// ca_file names a PEM file of the CAs that sign the server's certificate
// (default: the system's).
//
// valkey-go, a fork of rueidis, writes the commands of concurrent callers to a node in one
// write (auto-pipelining), so many goroutines share one connection per
// node. Waiters for a release listen on a connection per node that the
// client dedicates to publish/subscribe. A client built from a DSN makes
// no retries of its own (the algorithm makes one attempt per node per
// round), and connects at its node's first request, under that request's
// deadline.
//
// A node that refuses the URL's credentials, or that speaks TLS where the
// URL does not (or the other way round), fails an acquisition at once with
// an error matching lock.ErrMisconfigured.
//
// [New] takes clients you built; valkey-go honours context deadlines.
package valkey
