// Package rueidis is the Redlock driver over rueidis
// (github.com/redis/rueidis), registered as "rueidis". The algorithm, its
// guarantees and its advice on restarts are in package
// [github.com/distlock/lock/drivers/redlock].
//
//	import _ "github.com/distlock/lock/drivers/rueidis"
//
//	c, err := lock.Open("rueidis", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379")
//
// The DSN is the goredis driver's: a comma-separated list of redis:// or
// rediss:// (TLS) URLs, one per independent master (each URL one server),
// with a user, a password and a database number. Of rueidis's URL
// parameters it takes db, dial_timeout, write_timeout, client_name,
// protocol, skip_verify, and max_retries and client_cache, which are 0 (no
// retries, no client-side caching) unless the URL says otherwise; any
// other is an error. The algorithm's own parameters (node_timeout,
// fencing, key_prefix, quorum_first; see redlock.ParseDSN) may be added to any URL, and
// on a rediss:// URL ca_file names a PEM file of the CAs that sign the
// server's certificate (default: the system's).
//
// rueidis writes the commands of concurrent callers to a node in one
// write (auto-pipelining), so many goroutines share one connection per
// node. Waiters for a release listen on a connection per node that the
// client dedicates to publish/subscribe. A client built from a DSN
// connects at its node's first request, which waits for it no longer than
// its deadline.
//
// A node that refuses the URL's credentials, or that speaks TLS where the
// URL does not (or the other way round), fails an acquisition at once with
// an error matching lock.ErrMisconfigured.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection to a node, the publish/subscribe ones included, is
// dialed by the caller's dial, and TLS runs over it.
//
// [New] takes clients you built; rueidis honours context deadlines.
package rueidis
