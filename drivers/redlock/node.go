package redlock

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"time"
)

// Node is one independent Redis master, as the algorithm needs it. The
// adapters in drivers/goredis and drivers/redigo implement it over their
// clients; a Node may equally be a single server, a primary with replicas
// behind a failover client, or a cluster client. Every method must honour
// its context's deadline: that is what bounds a hung node.
type Node interface {
	// SetNX sets key to value with an expiry of ttl (SET key value NX PX
	// ms) if key does not exist, and reports whether it did.
	SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error)

	// Run runs script with EVALSHA, falling back to EVAL when the server
	// does not know it, and returns its integer reply. Keys and arguments
	// go only through KEYS and ARGV.
	Run(ctx context.Context, script *Script, keys []string, args ...any) (int64, error)

	// Subscribe opens a dedicated publish/subscribe connection to the node.
	Subscribe(ctx context.Context) (Subscriber, error)

	// Ping checks that the node answers.
	Ping(ctx context.Context) error

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

// Script is a Lua script with its SHA-1, for EVALSHA.
type Script struct {
	Src string
	SHA string
}

// NewScript returns src with its SHA-1.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{Src: src, SHA: hex.EncodeToString(sum[:])}
}
