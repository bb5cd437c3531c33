// Package redisguard is a fencing guard whose fences live in Redis, over
// github.com/redis/go-redis/v9. A Lua script checks a holder's token
// against the newest admitted for the resource, raises it, and makes the
// protected write in the same call, so that check and write are one
// atomic step: no write with an older token can come between them.
//
//	g := redisguard.New(rdb, redisguard.Config{})
//	err := g.Set(ctx, "cart/7", token, "{cart/7}:items", items)
//	if errors.Is(err, fencing.ErrStale) {
//		// a newer holder wrote since: this one's lock is lost
//	}
//
// [Guard.Set] and [Guard.HSet] carry a SET or an HSET; [Guard.Admit]
// only checks and raises, for a resource whose writes go elsewhere, where
// they are no longer atomic with the check.
//
// The fence of resource R is the string key Prefix+"{"+R+"}" (the prefix
// defaults to [DefaultPrefix]), holding the newest token in decimal. On
// Redis Cluster a script's keys must share a slot, so the protected key
// must carry the same hash tag, {R}; otherwise the call fails with
// CROSSSLOT. The fence keys never expire: deleting one, or losing it (a
// restart without appendfsync always, a failover to a replica that
// missed it), forgets the fence and lets an older token in again.
//
// Guard does not implement [fencing.Guard]: its Do would have to run an
// arbitrary Go function between the check and the raise, and a Redis
// script (or a MULTI) can only carry Redis commands known before it runs.
// A write made in a call of its own after the check could land after a
// newer holder's.
package redisguard
