// Package etcd is a lock driver for etcd v3, registered as "etcd", over
// go.etcd.io/etcd/client/v3. A lock is a key under an etcd lease: the
// cluster grants it in one transaction, judges the lease by its leader's
// clock (a new leader extends every lease, never shortens one), and deletes
// the key when the lease runs out, so a holder that vanishes frees its keys
// by itself. The fencing token is the key's create revision, which grows
// with every write to the cluster. Waiters are woken by a watch of the
// key's deletion. It is a module of its own, so that only its users
// download the etcd client and gRPC.
//
//	import _ "github.com/distlock/lock/drivers/etcd"
//
//	c, err := lock.Open("etcd", "etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379?prefix=app/locks/")
//
// The DSN is etcd://[user[:password]@]host[:port][,host[:port]...][?params]
// (port 2379 by default; user and password percent-encoded), with:
//
//	prefix           put before every key (default distlock/)
//	request_timeout  bounds each operation across members, and Connect (default 5s)
//	member_timeout   bounds each attempt on one member before the next is tried (default 1s)
//	dial_timeout     bounds Connect's wait for a member that answers (default 5s)
//	tls              true: https to the members (implied by the files below)
//	ca_file          PEM file of the CAs that sign the members' certificates
//	cert_file, key_file  the client's certificate and key, PEM
//
// A program that already has a client passes it to [New]. lock.Open reports
// a malformed DSN without contacting the cluster; no error and no String
// method shows the password.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection to a member, the watches' included, is dialed by the
// caller's dial, and TLS runs over it.
//
// A connection implements driver.Dropper: Drop deletes every key that
// starts with its prefix, held locks included, for tools that work under a
// scratch prefix of their own (end it with a '/', so that it holds no
// other prefix's keys). It refuses, with an error matching [ErrNotScratch]
// and lock.ErrMisconfigured, a DSN whose prefix overlaps the default one:
// no prefix, distlock/, a prefix of it such as distlock, or one under it
// such as distlock/tmp/. Tokens are create revisions, which keep growing
// across a Drop. It also implements driver.ScratchLister: ListScratch
// lists the key prefixes under a prefix ("distlock-verify/") that hold a
// key, each up to the next '/' ("distlock-verify/1a2b/"), so that such a
// tool finds the scratch prefixes an earlier run left.
//
// Every call ends by the caller's deadline or request_timeout, whichever
// comes first. A failure that the driver's own timeouts ended (members
// down, hung or silent) matches lock.ErrUnavailable; credentials the
// cluster refuses (a wrong user or password, none on a cluster with
// authentication, a user without permission on the prefix) match
// lock.ErrMisconfigured. An acquisition that failed after its request was
// sent is undone in the background, so the release the core sends after
// it returns at once. Close ends the calls in flight and returns without
// waiting for the cluster; lock.Client.Close first waits for its calls, up
// to request_timeout.
//
// An uncontended acquisition and release are one round trip each: leases
// are granted ahead, in the background, and shared by the acquisitions
// whose TTL they serve. The price: the cluster may keep a key up to a tenth
// of its TTL (at least 1s, at most a minute) plus a second past its TTL when
// its holder vanishes (etcd counts leases in seconds), and Client.Inspect
// reports times to the second. Each request goes to the leader (found at
// Connect and after each election; a follower would forward it, which
// costs 10-20% more), and to the next member when it fails or does not
// answer within member_timeout, so a member down or hung costs one
// timeout, not a share of every request; with a majority down, operations
// fail (not as held by another) within request_timeout.
//
// The design, the argument for its safety, and the measurements behind it
// are in DESIGN.md beside this file.
package etcd
