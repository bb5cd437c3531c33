package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distlock/lock/fencing"
)

// Holder describes the holder of a key, as [Client.Inspect] reports it.
type Holder struct {
	// ID identifies the acquisition that holds the key, as [Lock.ID] does
	// for the holder's own handle. It does not let anyone release the lock.
	ID string

	// TTL is the time left on the holder's lease, by the backend's clock.
	TTL time.Duration

	// Token is the holder's fencing token, if Fenced.
	Token  fencing.Token
	Fenced bool
}

// idLen is how much of an acquisition's value its ID shows. It shows 48 of
// the value's 160 random bits. That is enough to tell holders apart, and
// far from enough to guess the value that releases the lock.
const idLen = 8

// ID returns a short identifier of the acquisition. [Client.Inspect]
// reports the same identifier for the key's holder, so that a holder can
// recognise itself. The ID does not let anyone release the lock.
func (l *Lock) ID() string { return l.value[:idLen] }

// Inspect reports who holds key, and false if nobody does. On a driver
// that cannot tell (one without driver.Inspector), the error matches
// [errors.ErrUnsupported].
func (c *Client) Inspect(ctx context.Context, key string) (Holder, bool, error) {
	if err := checkKey(key); err != nil {
		return Holder{}, false, opError("inspect", key, err)
	}
	cn, err := c.ready(ctx)
	if err != nil {
		return Holder{}, false, opError("inspect", key, err)
	}
	if cn.inspector == nil {
		return Holder{}, false, opError("inspect", key, fmt.Errorf("driver %T cannot tell who holds a key: %w", cn.Conn, errors.ErrUnsupported))
	}
	if !c.enter() {
		return Holder{}, false, opError("inspect", key, ErrClosed)
	}
	defer c.leave()
	h, held, err := cn.inspector.Inspect(ctx, key)
	if err != nil || !held {
		if err != nil {
			err = opError("inspect", key, err)
		}
		return Holder{}, false, err
	}
	id := h.Value
	if len(id) > idLen {
		id = id[:idLen]
	}
	return Holder{ID: id, TTL: h.TTL, Token: fencing.Token(h.Lease.Token), Fenced: h.Lease.Fenced}, true, nil
}
