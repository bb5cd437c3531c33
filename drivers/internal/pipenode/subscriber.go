package pipenode

import (
	"context"
	"errors"
	"sync"

	"github.com/distlock/lock/drivers/redlock"
)

var errUnsubscribed = errors.New("the publish/subscribe connection closed")

// subscriber is a redlock.Subscriber over a [Conn]. The client calls its
// hooks on a goroutine of its own; they hand the events to Receive.
type subscriber struct {
	conn  Conn
	ended <-chan error // closed when the hooks will not be called again

	events    chan redlock.Event
	done      chan struct{} // closed by Close: the hooks drop what arrives
	closeOnce sync.Once
}

var _ Hooks = (*subscriber)(nil)

func newSubscriber() *subscriber {
	return &subscriber{events: make(chan redlock.Event, 16), done: make(chan struct{})}
}

func (s *subscriber) Message(channel, payload string) {
	s.deliver(redlock.Event{Kind: redlock.Message, Channel: channel, Payload: payload})
}

func (s *subscriber) Subscription(kind, channel string) {
	if kind == "subscribe" {
		s.deliver(redlock.Event{Kind: redlock.Subscribed, Channel: channel})
	}
}

// deliver waits for Receive to take ev, unless the subscriber closes.
func (s *subscriber) deliver(ev redlock.Event) {
	select {
	case s.events <- ev:
	case <-s.done:
	}
}

func (s *subscriber) Subscribe(ctx context.Context, channel string) error {
	return s.conn.Subscribe(ctx, channel)
}

func (s *subscriber) Unsubscribe(ctx context.Context, channel string) error {
	return s.conn.Unsubscribe(ctx, channel)
}

// Receive returns the next event, or an error once the connection ended.
func (s *subscriber) Receive(ctx context.Context) (redlock.Event, error) {
	select {
	case ev := <-s.events:
		return ev, nil
	case err, ok := <-s.ended:
		if !ok || err == nil {
			err = errUnsubscribed
		}
		return redlock.Event{}, err
	case <-ctx.Done():
		return redlock.Event{}, ctx.Err()
	}
}

// Close closes the connection, which ends a blocked Receive.
func (s *subscriber) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.conn.Close()
	})
	return nil
}
