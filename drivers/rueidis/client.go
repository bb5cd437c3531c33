package rueidis

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/distlock/lock/drivers/internal/pipenode"
)

// client presents a rueidis client to package pipenode.
type client struct{ c rueidis.Client }

var _ pipenode.Client = client{}

func (a client) Do(ctx context.Context, cmd pipenode.Command) (any, error) { return do(ctx, a.c, cmd) }

func (a client) Close() { a.c.Close() }

func (a client) Listen(h pipenode.Hooks) (pipenode.Conn, <-chan error) {
	dc, release := a.c.Dedicate()
	ended := dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage:      func(m rueidis.PubSubMessage) { h.Message(m.Channel, m.Message) },
		OnSubscription: func(s rueidis.PubSubSubscription) { h.Subscription(s.Kind, s.Channel) },
	})
	return conn{dc, release}, ended
}

// conn is a connection dedicated to publish/subscribe.
type conn struct {
	dc      rueidis.DedicatedClient
	release func()
}

func (c conn) Subscribe(ctx context.Context, ch string) error {
	return c.dc.Do(ctx, c.dc.B().Subscribe().Channel(ch).Build()).Error()
}

func (c conn) Unsubscribe(ctx context.Context, ch string) error {
	return c.dc.Do(ctx, c.dc.B().Unsubscribe().Channel(ch).Build()).Error()
}

func (c conn) Close() { c.dc.Close(); c.release() }

func do(ctx context.Context, c rueidis.CoreClient, cmd pipenode.Command) (any, error) {
	v, err := c.Do(ctx, c.B().Arbitrary(cmd.Head...).Keys(cmd.Keys...).Args(cmd.Tail...).Build()).ToAny()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	return v, err
}
