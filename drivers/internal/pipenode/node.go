package pipenode

import (
	"context"
	"errors"
	"sync"

	"github.com/distlock/lock/drivers/redlock"
)

var errClosed = errors.New("the node is closed")

// Node is a redlock.Node over a [Client]. It is safe for concurrent use.
//
// A node made by [Lazy] opens its client at its first request. Both
// clients dial and greet the server when they are made, under their own
// dial timeout rather than a context, so the node opens the client on a
// goroutine of its own and waits for it no longer than the request's
// context allows. One open runs at a time; the requests that arrive
// meanwhile wait for it, and a failed open is tried again by the next
// request.
//
// Close closes the client once the requests that use it have ended: a
// client closed while a request redials its connection would leave that
// connection open.
type Node struct {
	name string
	open func() (Client, error) // nil for a client the caller owns

	mu      sync.Mutex
	client  Client        // nil until opened
	opening chan struct{} // closed when the open under way ends
	openErr error         // the error of the last open
	users   int           // requests using the client
	closed  bool
}

var _ redlock.Node = (*Node)(nil)

// New returns a node over a client the caller owns: Close leaves it open.
// name names the node in errors and logs; it must hold no password.
func New(c Client, name string) *Node { return &Node{name: name, client: c} }

// Lazy returns a node that opens its client with open at its first
// request, and closes it in Close.
func Lazy(open func() (Client, error), name string) *Node { return &Node{name: name, open: open} }

// get returns the node's client, opening it if need be. The caller calls
// put when it is done with the client.
func (n *Node) get(ctx context.Context) (Client, error) {
	n.mu.Lock()
	c, closed, opening := n.client, n.closed, n.opening
	switch {
	case closed:
		n.mu.Unlock()
		return nil, errClosed
	case c != nil:
		n.users++
		n.mu.Unlock()
		return c, nil
	case opening == nil:
		opening = make(chan struct{})
		n.opening = opening
		go n.openClient(opening)
	}
	n.mu.Unlock()
	select {
	case <-opening:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.closed:
		return nil, errClosed
	case n.client == nil:
		return nil, n.openErr
	}
	n.users++
	return n.client, nil
}

// put ends a use of the client that get returned.
func (n *Node) put() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.users--
	n.closeIfUnused()
}

// closeIfUnused closes the client of a closed node, if the node opened it
// and no request uses it.
func (n *Node) closeIfUnused() {
	if n.closed && n.users == 0 && n.client != nil && n.open != nil {
		n.client.Close()
		n.client = nil
	}
}

// openClient opens the client, and closes it if the node closed
// meanwhile.
func (n *Node) openClient(done chan struct{}) {
	c, err := n.open()
	n.mu.Lock()
	defer n.mu.Unlock()
	defer close(done)
	n.opening = nil
	switch {
	case err != nil:
		n.openErr = err
	case n.closed:
		c.Close()
		n.openErr = errClosed
	default:
		n.client = c
	}
}

// Do sends one command. Its arguments are strings and int64s.
func (n *Node) Do(ctx context.Context, args []any) (any, error) {
	cmd, err := command(args)
	if err != nil {
		return nil, err
	}
	c, err := n.get(ctx)
	if err != nil {
		return nil, err
	}
	defer n.put()
	v, err := c.Do(ctx, cmd)
	return resp2(v), err
}

// resp2 turns a RESP3 boolean, which a script's Lua boolean becomes, into
// what redlock's scripts expect, as RESP2 replies it: 1 for true, nil for
// false.
func resp2(v any) any {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1)
		}
		return nil
	case []any:
		for i := range v {
			v[i] = resp2(v[i])
		}
	}
	return v
}

// Subscribe dedicates a connection of the client's to publish/subscribe.
// Like the client itself, the connection may be dialed without a
// context, so it is made on a goroutine of its own.
func (n *Node) Subscribe(ctx context.Context) (redlock.Subscriber, error) {
	c, err := n.get(ctx)
	if err != nil {
		return nil, err
	}
	s := newSubscriber()
	made := make(chan struct{})
	var failed error
	go func() {
		defer close(made)
		defer n.put()
		s.conn, s.ended = c.Listen(s)
		failed = dialFailure(s.ended)
	}()
	select {
	case <-made:
		if failed != nil {
			s.Close()
			return nil, failed
		}
		return s, nil
	case <-ctx.Done():
		go func() { <-made; s.Close() }()
		return nil, ctx.Err()
	}
}

// dialFailure returns the error of a dedicated connection that ended as
// it was made, or nil. A client that is open hands out a connection whose
// dial failed (its server is down) as one that ends at once: that is a
// failed Subscribe, which redlock retries with a backoff and which tells
// its Watch not to wait for the node, not a connection in place.
func dialFailure(ended <-chan error) error {
	select {
	case err, ok := <-ended:
		if !ok || err == nil {
			err = errUnsubscribed
		}
		return err
	default:
		return nil
	}
}

func (n *Node) String() string { return n.name }

// GoString is String, so that %#v shows no password either.
func (n *Node) GoString() string { return n.String() }

// Close closes the client if the node opened it, once no request uses it.
// An open still under way closes its client when it ends.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	n.closeIfUnused()
	return nil
}
