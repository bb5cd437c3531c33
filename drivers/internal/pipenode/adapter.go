package pipenode

import "context"

// Client is what a node needs of a client. Its Do and Conn's Subscribe
// and Unsubscribe honour their context's deadline.
type Client interface {
	// Do sends cmd and returns the reply as the client's ToAny gives it,
	// with a nil reply as nil and a nil error.
	Do(ctx context.Context, cmd Command) (any, error)

	// Listen dedicates a connection to publish/subscribe and calls h for
	// what arrives on it, on one goroutine of the client's. The channel
	// is closed, after at most one error, when h will not be called again.
	Listen(h Hooks) (Conn, <-chan error)

	// Close closes the client.
	Close()
}

// Conn is a connection dedicated to publish/subscribe by [Client.Listen].
type Conn interface {
	Subscribe(ctx context.Context, channel string) error
	Unsubscribe(ctx context.Context, channel string) error
	// Close closes the connection: the channel of Listen is closed.
	Close()
}

// Hooks receives what arrives on a [Conn].
type Hooks interface {
	// Message is a message published on channel.
	Message(channel, payload string)
	// Subscription is a confirmation; kind is "subscribe",
	// "unsubscribe" and the like.
	Subscription(kind, channel string)
}
