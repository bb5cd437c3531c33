// Package nats is a lock driver for NATS JetStream key-value buckets,
// registered as "nats", over github.com/nats-io/nats.go and its jetstream
// package. It needs nats-server 2.11 or newer, for TTLs per key. A lock
// is a key of the bucket written with a TTL that the server judges: a
// holder that vanishes frees its keys by itself. Every write is
// conditional on the key's last revision, checked by the stream's leader,
// so that no acquisition writes over a holder, and only the holder's
// current revision extends or releases. The fencing token is the grant's
// revision, which grows with every write to the bucket. Waiters are woken
// by one watch of the bucket per client. It is a module of its own, so
// that only its users download the NATS client.
//
//	import _ "github.com/distlock/lock/drivers/nats"
//
//	c, err := lock.Open("nats", "nats://app:secret@10.0.0.1:4222,10.0.0.2:4222,10.0.0.3:4222?bucket=locks")
//
// The DSN is nats://[user[:password]@]host[:port][,host[:port]...][?params]
// (port 4222 by default; a user without a password is a token, as in
// nats.go's URLs; both percent-encoded), with:
//
//	bucket           the KV bucket of the locks (default distlock)
//	replicas         of a bucket the driver creates, and the fewest it accepts without a warning (default 3)
//	create           false: never create the bucket, only check it (default true)
//	request_timeout  bounds each call, connecting included (default 10s)
//	attempt_timeout  past it without an answer, the server is checked and the request sent again (default 1s)
//	dial_timeout     bounds the connection to each server (default 2s)
//	tls              true: TLS to the servers (implied by the files below)
//	ca_file          PEM file of the CAs that sign the servers' certificates
//	cert_file, key_file  the client's certificate and key, PEM
//	creds_file       a NATS credentials file (JWT and NKey seed)
//	nkey_file        a file with an NKey seed
//	monitor          a server's monitoring URL: Connect checks its fsync setting there
//
// A program that already has a connection passes its JetStream to [New].
// lock.Open reports a malformed DSN without contacting a server; no error
// and no String method shows the password or the token.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection to a server, to those the cluster announces and to the
// monitoring URL included, is dialed by the caller's dial, and TLS runs
// over it.
//
// Connect, and Ping, check what a client can read of the bucket. A bucket
// without TTLs per key, with a TTL of its own, or that is a mirror or
// sealed is refused, with an error matching lock.ErrMisconfigured, as is
// a server older than 2.11. A bucket with fewer replicas than asked for,
// in memory, without expiry markers, or made without the driver's
// clock-based first revision is used with a warning on Config.Logger
// (slog.Default() for a DSN). An ordinary client cannot read the
// server's fsync setting: only where the DSN names a monitoring endpoint
// does Connect read it, and warn unless it is sync_interval: always.
//
// A connection implements driver.Dropper: Drop deletes its bucket, for
// tools that work in a scratch bucket of their own. It refuses, with an
// error matching [ErrNotScratch] and lock.ErrMisconfigured, the default
// bucket (no bucket parameter, or distlock named). Tokens of a bucket made
// again keep growing. It also implements driver.ScratchLister: ListScratch
// lists the buckets whose names begin with a prefix ("distlock_verify_"),
// so that such a tool finds the scratch buckets an earlier run left.
//
// A lock is only as durable as the servers' fsync. By default JetStream
// fsyncs every two minutes, and Jepsen found (NATS 2.12.1, December 2025)
// that servers that crash together then lose acknowledged writes: a lost
// grant lets a second holder in, and its revision may be handed out
// again as a token. Run the servers with sync_interval: always, on a
// bucket of 3 replicas.
//
// Every call ends by the caller's deadline or request_timeout, whichever
// comes first, and Close ends the calls in flight at once. A failure that
// the driver's timeouts ended (no server, or no stream leader, answered)
// matches lock.ErrUnavailable; credentials the servers refuse match
// lock.ErrMisconfigured. An election of the bucket's stream leader takes
// 4 to 9 seconds, during which writes wait: keep request_timeout, and
// TTLs, above it. An acquisition that failed after its write was sent is
// undone in the background until its TTL has passed.
//
// The design, the argument for its safety, and the measurements behind it
// are in DESIGN.md beside this file.
package nats
