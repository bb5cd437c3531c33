// Package redlock implements the Redlock algorithm of the Redis "distlock"
// document over N independent Redis masters, once, for the drivers that
// expose it over a client library: drivers/goredis (go-redis v9, registered
// as "goredis"), drivers/redigo (redigo, registered as "redigo"),
// drivers/rueidis ("rueidis") and drivers/valkey (valkey-go, "valkey"). Most
// programs use those through package lock and never import this one; it is
// for those who bring their own [Node] implementation:
//
//	connector, err := redlock.NewConnector([]redlock.Node{n1, n2, n3}, redlock.WithFencing(true))
//	c := lock.OpenConnector(connector)
//
// With N nodes a lock needs a quorum of N/2+1; N=1 is the single-instance
// lock. Acquire sets the key on every node at once ([WithQuorumFirst]
// asks a quorum first, and the others only if needed: fewer requests,
// locks on a bare quorum), with a per-node timeout that adapts to the
// nodes' round trips (50ms to 1s, and at most a quarter of the TTL;
// [WithNodeTimeout] fixes it), and decides as soon as a quorum said yes or
// is out of reach, so a slow or hung minority delays nothing. Past the timeout, a node is given up only if it seems hung: it
// stays silent while another node answered. Nodes that are slow together,
// as on a saturated machine, are waited for up to 1s (a quarter of the
// TTL). A failed attempt is undone on the nodes it may have reached. A
// release that did not reach some nodes leaves its value there: the
// client's next acquisition of the key deletes it first, and does not
// report the key as held by another holder. Release and Extend are compare-and-delete and
// compare-and-PEXPIRE scripts and count only with a quorum; an expired
// lease is never revived. A round that failed because nodes did not answer
// returns a [*QuorumError], never driver.ErrHeld. [Redlock.Inspect] reports
// the value that a quorum of nodes holds, or nobody once the answers rule
// a quorum out for every value.
//
// The lock for key K is stored at PREFIX{K} ([DefaultKeyPrefix] unless
// [WithKeyPrefix] says otherwise), a Redis Cluster hash tag that keeps it
// on the shard of its fencing counter PREFIX{K}:fence (a K that starts
// with '}' gets a NUL before it, PREFIX{\x00K}, lest the tag be empty); releases are
// published on PREFIX{K}:released, by the key's lead node (by more when
// it cannot), where waiters listen on every node. Keys and values
// reach Redis only as script or command arguments. DSNs of the Redis
// drivers may set node_timeout, fencing and key_prefix: see [ParseDSN].
//
// [Redlock.Drop] (driver.Dropper) deletes every key that starts with the
// key prefix on every node, locks and fencing counters alike, with SCAN
// MATCH and UNLINK in batches, for tools that work under a scratch prefix
// of their own (end it with a ':', so that it holds no other prefix's
// keys). It refuses, with an error matching [ErrNotScratch] and
// lock.ErrMisconfigured, a prefix that overlaps the default one: the empty
// prefix (every key), distlock:, a prefix of it, or one that starts with
// it. It refuses a [Sharded] node (a cluster client) too. It succeeds only
// if every node did. Tokens of a dropped prefix start again from 1, so a
// dropped prefix is not for reuse where tokens matter. [Redlock.ListScratch]
// (driver.ScratchLister) lists the key prefixes under a prefix
// ("distlock-verify/") that hold a key on some node, each up to the next
// '/' ("distlock-verify/1a2b/"), so that such a tool finds the scratch
// prefixes an earlier run left; it refuses a Sharded node too.
//
// Fencing tokens ([WithFencing], off by default) cost a second round trip
// per acquisition. A key's tokens strictly increase while no node loses
// its data; counters are never deleted (a small key per lock key ever
// used).
//
// Restarts. The guarantees are only as strong as the nodes' memory. A node
// that restarts empty forgets the locks it held, and another client may
// then take a key that is still held. Follow the Redis document's advice:
// run the nodes with AOF and appendfsync always (slow), or keep a restarted
// node out of service for at least the longest TTL in use (a delayed
// restart), so that every lock it knew has expired before it answers
// again. A delayed restart protects the locks but not the fencing
// counters: the restarted node's counters start again from zero. A token
// is written on every node the acquisition asked, so it survives a
// minority's restarts when every node took it, but not when nodes missed
// it (hung or down at the time) and others then restart: a later token
// can then repeat an earlier one or go below it. Where tokens matter, run
// the nodes with appendfsync always. A failover to a replica
// that missed a write is a restart without the delay.
//
// The design, and the argument for its safety, are in DESIGN.md beside this file.
package redlock
