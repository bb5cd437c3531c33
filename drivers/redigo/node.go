package redigo

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/distlock/lock/drivers/redlock"
)

// node is a redlock.Node over a redigo pool.
type node struct {
	pool *redis.Pool
	name string
	dial func(context.Context) (redis.Conn, error) // a publish/subscribe connection
	own  bool                                      // Close closes the pool
}

var _ redlock.Node = (*node)(nil)

var errNoCommand = errors.New("redigo: a command's name must be a string")

// Do runs one command on a pooled connection, under ctx: getting the
// connection (and dialing it, if need be) and the command itself.
//
// A context with a deadline (redlock's node timeout gives every command
// one) bounds the command by the socket's read deadline, through
// DoWithTimeout. redigo's DoContext would do the same, but it runs every
// command on a goroutine of its own so that it can also notice a
// cancellation, which costs four allocations a command, the better part of
// an acquisition's; a cancellation before the deadline is noticed at the
// deadline. A context without a deadline goes through DoContext. Either
// way a timed-out connection is closed, not returned to the pool.
func (n *node) Do(ctx context.Context, args []any) (any, error) {
	if len(args) == 0 {
		return nil, errNoCommand
	}
	name, ok := args[0].(string)
	if !ok {
		return nil, errNoCommand
	}
	if err := ctx.Err(); err != nil {
		return nil, err // spares a pooled connection that a timeout would close
	}
	c, err := n.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	var reply any
	if deadline, ok := ctx.Deadline(); ok {
		reply, err = redis.DoWithTimeout(c, max(time.Until(deadline), time.Nanosecond), name, args[1:]...)
	} else {
		reply, err = redis.DoContext(c, ctx, name, args[1:]...)
	}
	c.Close()
	if err != nil {
		return nil, err // a server's error reply is a redis.Error: its message is the server's
	}
	return normalize(reply), nil
}

// normalize turns a reply into the types redlock.Node promises: bulk
// strings become strings, in arrays too.
func normalize(reply any) any {
	switch r := reply.(type) {
	case []byte:
		return string(r)
	case []any:
		for i, v := range r {
			r[i] = normalize(v)
		}
	}
	return reply
}

// Subscribe dials a connection of its own for publish/subscribe, so that
// closing it is closing a socket, which makes a blocked Receive return.
func (n *node) Subscribe(ctx context.Context) (redlock.Subscriber, error) {
	c, err := n.dial(ctx)
	if err != nil {
		return nil, err
	}
	return &subscriber{psc: redis.PubSubConn{Conn: c}}, nil
}

func (n *node) String() string { return n.name }

// GoString is String, so that %#v shows no password either.
func (n *node) GoString() string { return n.String() }

func (n *node) Close() error {
	if n.own {
		return n.pool.Close()
	}
	return nil
}

// subscriber is a redlock.Subscriber over a dedicated connection. redlock
// calls Subscribe and Unsubscribe from one goroutine at a time, and Receive
// from another; redigo's connection allows a writer and a reader at once.
type subscriber struct {
	psc redis.PubSubConn
}

// Subscribe sends SUBSCRIBE channel. The write is bounded by the
// connection's write timeout rather than by ctx, which redigo's Send does
// not take.
func (s *subscriber) Subscribe(ctx context.Context, channel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.psc.Subscribe(channel)
}

// Unsubscribe sends UNSUBSCRIBE channel, as Subscribe sends SUBSCRIBE.
func (s *subscriber) Unsubscribe(ctx context.Context, channel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.psc.Unsubscribe(channel)
}

// Receive waits for a subscription's confirmation or a message. Any error
// leaves the connection closed.
func (s *subscriber) Receive(ctx context.Context) (redlock.Event, error) {
	switch m := s.psc.ReceiveContext(ctx).(type) {
	case redis.Message:
		return redlock.Event{Kind: redlock.Message, Channel: m.Channel, Payload: string(m.Data)}, nil
	case redis.Subscription:
		if m.Kind == "subscribe" {
			return redlock.Event{Kind: redlock.Subscribed, Channel: m.Channel}, nil
		}
		return redlock.Event{Channel: m.Channel}, nil
	case error:
		s.psc.Close() // a protocol error may leave the connection open
		return redlock.Event{}, m
	default:
		return redlock.Event{}, nil
	}
}

// Close closes the connection, which makes a blocked Receive return.
func (s *subscriber) Close() error {
	if s.psc.Conn.Err() != nil {
		return nil // closed already, by a failure
	}
	return s.psc.Close()
}
