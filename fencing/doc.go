// Package fencing holds fencing tokens and the guards that check them at
// the protected resource.
//
// A lock with a TTL can always outlive its holder's belief that it holds
// it. After a GC pause, a slow network or a clock jump, a holder may write
// after its lock was granted to someone else. Locks therefore come with
// fencing tokens (lock.Lock.Token), numbers that strictly increase with
// every acquisition of a key. The holder sends its token with every write,
// and the resource refuses a token older than the newest it has admitted.
// Without that check at the resource, a token is only a number.
//
// A [Guard] makes the check and the write one atomic step. [MemoryGuard]
// guards a resource in this process. fencing/pgguard guards one in
// PostgreSQL, where the check runs in the writer's transaction.
// fencing/sqlguard does the same over database/sql, in MySQL, MariaDB or
// PostgreSQL. fencing/redisguard guards one in Redis, where a script
// checks and writes. Equal tokens are admitted, so that a holder may write
// several times under one lock. A refused token gives a [*StaleError],
// which matches [ErrStale].
//
// Over HTTP, a client sends the token in the [Header] (Fencing-Token) with
// [Transport] or [SetHeader]. [Middleware] runs the guard on the server,
// and answers 409 Conflict to a stale token. For example:
//
//	guard := fencing.NewMemoryGuard()
//	http.Handle("/docs/", fencing.Middleware(guard, func(r *http.Request) string {
//		return r.URL.Path
//	})(storeHandler))
//
//	client := &http.Client{Transport: fencing.Transport(nil)}
//	req, _ := http.NewRequestWithContext(fencing.NewContext(ctx, tok), "PUT", url, body)
//	resp, err := client.Do(req) // 409 if a newer holder wrote first
package fencing
