// Package lock provides distributed locks with one small API over many
// backends, the way database/sql provides databases. A program imports the
// driver it wants for its side effect and opens a [Client] with a driver
// name and a DSN. It swaps backends by changing the import and the DSN.
//
//	import (
//		"github.com/distlock/lock"
//		_ "github.com/distlock/lock/drivers/memory" // registers "memory"
//	)
//
//	c, err := lock.Open("memory", "example")
//	...
//	l, err := c.Acquire(ctx, "invoice:42", lock.WithTTL(10*time.Second))
//	...
//	defer l.Release(ctx)
//
// # The promises
//
// Every driver keeps these, and package conformance checks them.
//
//  1. Mutual exclusion. While time.Now() is before [Lock.ValidUntil], no
//     other acquisition of the same key succeeds.
//  2. Deadlock freedom. A lock whose holder vanished becomes free after
//     its TTL, without anyone's help.
//  3. Fault tolerance (quorum drivers). Acquire and release work while a
//     majority of nodes are up.
//  4. Ownership. Only the holder can extend or release a lock.
//  5. Fencing (drivers that advertise it). Tokens of one key strictly
//     increase with each acquisition.
//
// # Validity and fencing
//
// A lock with a TTL can outlive its holder's belief that it holds it. A
// process pause, a slow network or a clock jump can let the lease run out
// while the holder keeps working. [Lock.ValidUntil] is computed on the
// client's monotonic clock from a reading taken before the request was
// sent, minus an allowance for clock drift, so it never claims more than
// the backend granted. Only fencing tokens ([Lock.Token]), checked by the
// protected resource, make a stale holder harmless (see package fencing).
// [Lock.Done] is closed when the validity passes without an extension.
// [Lock.KeepAlive] extends a lock in the background. [Client.Do] does both.
//
// # Division of labour
//
// The core (this package) owns what is the same for every backend. That
// is the random value of each acquisition, the validity clock, retries and
// waiting, auto-extension in [Client.Do], validation of keys, TTLs and
// options, counters ([Client.Stats]) and logging (through log/slog, silent
// on the hot path). A driver (package driver) speaks one backend's
// protocol and makes exactly one attempt per call.
package lock
