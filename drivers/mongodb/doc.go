// Package mongodb is a lock driver for MongoDB and servers that speak its
// wire protocol (FerretDB among them), registered as "mongodb", over
// go.mongodb.org/mongo-driver/v2. Each acquisition inserts a grant document
// of its own, keyed by the lock's key and a fence: the primary key's
// uniqueness decides who wins, the server's clock decides when a lease
// ends, and the fence is the fencing token, strictly increasing per key.
// Acquire and Release use only finds and inserts by _id: an uncontended
// acquire and release is three round trips.
//
//	import _ "github.com/distlock/lock/drivers/mongodb"
//
//	c, err := lock.Open("mongodb", "mongodb://db1,db2,db3/?replicaSet=rs0&distlock_database=app")
//
// A program that already has a mongo.Client passes it to [New], and the
// connector to lock.OpenConnector. Otherwise each lock.Client gets a
// mongo.Client of its own.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection to a server, the monitors' and those to the members the
// client discovers included, is dialed by the caller's dial, and TLS runs
// over it.
//
// The DSN is a mongodb:// connection string, with every option of the Go
// driver, and these of the driver's own (any other distlock_ parameter is
// an error):
//
//	distlock_database           the database (default: the URI's path, else "distlock")
//	distlock_collection         the grants collection (default "distlock_grants")
//	distlock_create_collection  false: never create the collection, only check that it exists (default true)
//	distlock_prune              false: keep superseded grants instead of deleting them (default true)
//	distlock_request_timeout    bounds each call, connecting included (default 5s)
//
// mongodb+srv:// is refused, since resolving it contacts DNS: resolve it
// with the Go driver and use [New]. lock.Open reports a malformed DSN
// without contacting the server; no error and no String method repeats a
// password.
//
// A connection implements driver.Dropper: Drop deletes its grants
// collection, with every grant in it, for tools that work in a scratch
// collection of their own. It refuses, with an error matching
// [ErrNotScratch] and lock.ErrMisconfigured, a DSN that names no collection
// of its own: one without distlock_collection or naming the default
// (distlock_grants, in any database), and one with
// distlock_create_collection=false, whose collection is not the driver's.
// Close the other connections on the collection first, since their writes
// would make it again. Tokens of a collection made again start from 1, so
// a dropped collection's name is not for reuse where tokens matter. It
// also implements driver.ScratchLister: ListScratch lists the collections
// of its database whose names begin with a prefix ("distlock_verify_"), so
// that such a tool finds the scratch collections an earlier run left.
//
// Every call ends within the request timeout, or sooner with the caller's
// context; the timeout's errors match lock.ErrUnavailable. Refused
// credentials match lock.ErrMisconfigured. From a DSN, calls fail within
// a second once no server can be reached (connections refused, host names
// unknown, certificates not trusted), rather than when the Go driver's
// server selection gives up (30s by default). lock.Client.Close
// takes at most four request timeouts. "Failures and timeouts" in
// DESIGN.md has the details.
//
// Writes use write concern {w: "majority", j: true} and reads use read
// concern "majority", on the primary, unless the DSN's w, journal or
// readConcernLevel say otherwise (w or journal replaces the whole default
// write concern), or [Config.WriteConcern] and [Config.ReadConcern] do;
// the client's own defaults are never used. With w:1 or a weaker read
// concern, a failover can lose grants, and with them mutual exclusion and
// token order. A deposed primary can serve a stale majority read during a
// failover: readConcernLevel=linearizable closes that window, at the cost
// of a majority round trip per read.
//
// What it assumes, and what it does not do:
//   - The server's clock runs at the rate of real time (within 500 ppm) and
//     is not stepped forward: a forward step shortens every lease by the step.
//     Clients' clocks are never used.
//   - A lease lasts, by the server's clock, up to a hello's round trip plus
//     1ms longer than asked, so a vanished holder's key frees that much later.
//   - With pruning on, the server executes an insert within 15s of its
//     sender's deadline. Where that may not hold, turn pruning off; the
//     collection then keeps a document per acquisition and release.
//   - Releases are not announced (that needs change streams, which FerretDB
//     lacks): waiters poll at the pace of their retry strategy.
//
// The design, and the argument for its safety, are in DESIGN.md beside this file.
package mongodb
