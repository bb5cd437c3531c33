package redlock

import (
	"context"
	"time"
)

// Extend resets the expiry of key to ttl on every node where value holds
// it, and succeeds if a quorum did. A key that expired is gone from its
// node, so an expired lease is never revived.
func (r *Redlock) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	e := &extendRound{call: extendScript.call([]string{r.lockKey(key)}, value, millis(ttl))}
	e.begin(ctx, r, e, ttl)
	e.fanOut()
	return e.holderVerdict("extend")
}

// extendRound is the round of one Extend: compare-and-PEXPIRE on every
// node.
type extendRound struct {
	noHooks
	round
	call []any // extendScript's
}

// ask runs the extend script, and counts a reply of 1 as a yes.
func (e *extendRound) ask(ctx context.Context, _ int, n Node) (bool, int64, error) {
	v, err := run(ctx, n, extendScript, e.call)
	return err == nil && v == 1, v, err
}
