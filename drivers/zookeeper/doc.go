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
// A ZooKeeper lock lives as long as its holder's session, not for a TTL.
// The driver maps one onto the other: a lock of TTL t is a node of a
// session whose timeout is t, negotiated with the ensemble and read back
// from its answer (a TTL the servers' minSessionTimeout and
// maxSessionTimeout do not allow fails with an error matching
// [ErrSessionTimeout]). So a holder that vanishes (its process dies or
// stops, or is cut off) loses the lock when the ensemble expires its
// session: at most t (plus a tick) after it was last heard from. Each
// client keeps one session per TTL it uses, opened at first use.
//
// The core's validity, start + t - drift, never outlasts what the
// ensemble promises: the request that creates the node, and each
// extension's request, reach the ensemble after the core read its clock,
// and a session lives at least its timeout after its last request. A holder
// that is still connected but neither extends nor releases the lock loses
// it too: the driver deletes the node when the lease runs out. Extend
// confirms through the leader (a sync, then a read) that the node still
// exists in a live session; an extension to another TTL moves the node, in
// one transaction, to the session of that TTL, keeping its place and its
// token.
//
// A connection lost to one member is not a lock lost: the client moves the
// session to another member, and the lock stays as long as that happens
// within the session's timeout. Meanwhile operations are retried (within
// request_timeout) and extensions fail, and if none succeeds before the
// lock's validity passes, the core ends the lock ([lock.Lock.Done] is
// closed, [lock.Client.Do] cancels its function) even though the node may
// live on; the driver deletes it once it can. If the session expires, the
// ensemble has deleted the node: the next extension says the lock is not
// held, and the core ends the lock then, if its validity had not passed
// already. It always has: the session expires no earlier than its timeout
// after the last extension.
//
// What it does not guarantee, and what to do about it:
//   - A process paused past its session's timeout (a stop, a long GC pause, a
//     VM migration) loses its lock while it believes, until it looks at the
//     clock, that it holds it. Pass the token to the resource: see package
//     fencing. The tests show a stopped holder's write refused.
//   - Waiters are not served in order: an acquisition makes one attempt and
//     gives way at once if another attempt came first (the core does the
//     waiting), so each release wakes every waiting client once, and they
//     race. Within one client the core queues its own waiters.
//   - Reads are the member's own, which may lag behind the leader; the
//     driver decides "held" only after a sync or after its own write, so a
//     release is seen by every client as soon as it returned.
//   - A connection given to [New] serves only the TTL equal to its session
//     timeout, and the driver cannot give up a hung member on it faster
//     than the client does (two thirds of the session timeout).
//
// The design, the argument for its safety, and the measurements behind it
// are in DESIGN.md beside this file.
package zookeeper
