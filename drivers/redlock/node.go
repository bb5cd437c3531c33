package redlock

import "context"

// Node is one independent Redis master, as the algorithm needs it. The
// adapters in drivers/goredis and drivers/redigo, and drivers/internal/pipenode
// for rueidis and valkey-go, implement it over their clients; a Node may equally be a single server, a primary with replicas
// behind a failover client, or a cluster client. Every method must honour
// its context's deadline: that is what bounds a hung node. A request that
// ran out of its deadline returns an error for which [IsTimeout] is true,
// so that the node's breaker counts it.
type Node interface {
	// Do sends one command (args[0] is its name; the others are strings
	// and int64s) and returns the reply: a status or bulk string reply as a
	// string, an integer reply as an int64, a nil reply as nil with a nil
	// error, and an error reply as an error whose message is the server's
	// (such as "NOSCRIPT ..."); an array reply is a []any of such values.
	// Do must not modify args: the same slice goes to every node of a
	// round at once. The command is sent once; the algorithm decides what
	// to retry.
	Do(ctx context.Context, args []any) (any, error)

	// Subscribe opens a dedicated publish/subscribe connection to the node.
	Subscribe(ctx context.Context) (Subscriber, error)

	// String names the node for errors and logs (its address, never its
	// credentials).
	String() string

	// Close releases the node's resources, if the Node owns them.
	Close() error
}

// Subscriber is a publish/subscribe connection to one node, returned by
// [Node.Subscribe]. One goroutine calls Receive while others may call
// Subscribe and Unsubscribe.
type Subscriber interface {
	// Subscribe asks the node to subscribe to channel. The node's
	// confirmation arrives later through Receive.
	Subscribe(ctx context.Context, channel string) error

	// Unsubscribe asks the node to unsubscribe from channel.
	Unsubscribe(ctx context.Context, channel string) error

	// Receive waits for the next event on the connection: a confirmed
	// subscription or a message. An error means the connection is no
	// longer usable.
	Receive(ctx context.Context) (Event, error)

	// Close closes the connection, making a blocked Receive return.
	Close() error
}

// Event is what a [Subscriber] receives.
type Event struct {
	Kind    EventKind
	Channel string
	Payload string // a Message's content
}

// EventKind tells events apart.
type EventKind int

const (
	// Other is any event the algorithm does not use.
	Other EventKind = iota
	// Subscribed confirms a subscription to Channel.
	Subscribed
	// Message is a message published on Channel.
	Message
)
