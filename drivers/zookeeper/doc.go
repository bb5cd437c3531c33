// Package zookeeper is a lock driver for ZooKeeper, registered as
// "zookeeper", over github.com/go-zookeeper/zk. It is the recipe
// Curator's InterProcessMutex made familiar: each attempt on a key is an
// ephemeral sequential node under the key's node, and the lowest one holds
// the key. The fencing token is the holder node's creation zxid, which
// grows with every write to the ensemble, so it grows with every grant.
// Waiters watch the holder's node only, and wake when it is deleted.
//
//	import _ "github.com/distlock/lock/drivers/zookeeper"
//
//	c, err := lock.Open("zookeeper", "zk://10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181/app/locks")
//
// The DSN is zk://[user[:password]@]host[:port][,host[:port]...][/chroot][?params]
// (port 2181 by default; user and password percent-encoded, for ZooKeeper's
// digest scheme: the driver's nodes then get an ACL that gives that user
// all rights, and nobody else any). The chroot is the node keys live
// under (default /distlock); the driver creates it if it is missing. The
// parameters:
//
//	session_timeout  the first session's timeout (default 10s, the core's default TTL)
//	request_timeout  bounds each operation, retries over reconnections and Connect included (default 5s)
//	member_timeout   a member silent that long with requests to answer is given up (default 1s)
//	dial_timeout     bounds the wait for the ensemble to grant a session (default 5s)
//	max_sessions     sessions per client, one per TTL in use (default 8)
//
// A program that already has a connection passes it to [New]. lock.Open
// reports a malformed DSN without contacting the ensemble; no error and no
// String method shows the password.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection of every session, to every member, is dialed by the
// caller's dial.
//
// A connection implements driver.Dropper: Drop deletes its chroot node and
// everything under it, held locks included, for tools that work in a
// scratch chroot of their own; the chroot's ancestors stay. It refuses,
// with an error matching [ErrNotScratch] and lock.ErrMisconfigured, a DSN
// whose chroot overlaps the default one: no chroot, /distlock, or one under
// it such as /distlock/tmp (the node of the default namespace's key
// "tmp"). /zookeeper and what lies under it are refused too. Tokens are
// creation zxids, which keep growing across a Drop. It also implements
// driver.ScratchLister: ListScratch lists the chroots that begin with an
// absolute prefix ("/distlock-verify-"), children of the node the prefix
// ends in, whatever the connection's own chroot, so that such a tool finds
// the scratch chroots an earlier run left.
//
// Every call ends by the caller's deadline or request_timeout, whichever
// comes first. A failure that the driver's own timeouts ended (an ensemble
// down, hung or silent) matches lock.ErrUnavailable; an identity that the
// ACL of the driver's nodes does not admit (another digest user, a wrong
// password, none) matches lock.ErrMisconfigured. Close ends the calls in
// flight and returns within member_timeout, or a second if that is longer,
// even if no member answers (the client waits for the end of its sessions);
// lock.Client.Close first waits for its calls, up to request_timeout.
//
// # TTLs are sessions
//
// A ZooKeeper lock lives as long as its holder's session. A lock of TTL t
// is a node of a session whose timeout is t, as the ensemble negotiated it.
// A TTL that the servers' session bounds refuse fails with an error
// matching [ErrSessionTimeout]. Each client keeps one session per TTL it
// uses. A holder that vanishes loses the lock when the ensemble expires its
// session. A holder that neither extends nor releases loses it too: the
// driver deletes the node when the lease runs out.
//
// A connection lost to one member is not a lock lost: the client moves the
// session to another member within its timeout. Extensions fail meanwhile,
// and the core ends the lock at its validity if none succeeds.
//
// What it does not guarantee:
//   - A process paused past its session's timeout loses its lock while it
//     believes it holds it. Pass the token to the resource (package fencing).
//   - Waiters of different clients are not served in order: each release
//     wakes them once, and they race. Within one client the core queues them.
//   - A connection given to [New] serves only the TTL equal to its session
//     timeout.
//
// The design, the argument for its safety, and the measurements behind it
// are in DESIGN.md beside this file.
package zookeeper
