package pipenode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/redlock"
)

// The constraints below are the methods that rueidis and valkey-go share
// under different types. A driver never names them: Go infers them from
// the functions it passes to [NewLibrary]. Their letters: C the client, D
// a dedicated connection, B the command builder, A an arbitrary command,
// S and U the SUBSCRIBE and UNSUBSCRIBE builders, Cmd a built command, R a
// result, H the publish/subscribe hooks, M a message, N a subscription's
// notice.

type arbitrary[A, Cmd any] interface {
	Keys(keys ...string) A
	Args(args ...string) A
	Build() Cmd
}

type channels[Cmd any, S completer[Cmd]] interface {
	Channel(channels ...string) S
}

type completer[Cmd any] interface{ Build() Cmd }

type builder[A, S, U any] interface {
	Arbitrary(tokens ...string) A
	Subscribe() S
	Unsubscribe() U
}

type result interface {
	ToAny() (any, error)
	Error() error
}

type coreClient[B, Cmd, R any] interface {
	B() B
	Do(ctx context.Context, cmd Cmd) R
}

type dedicated[B, Cmd, R, H any] interface {
	coreClient[B, Cmd, R]
	SetPubSubHooks(hooks H) <-chan error
	Close()
}

type client[C, D, B, Cmd, R any] interface {
	coreClient[B, Cmd, R]
	Dedicate() (D, func())
	Nodes() map[string]C
	Close()
}

// message and notice are the clients' PubSubMessage and
// PubSubSubscription, which convert to pubsubMessage and pubsubNotice.
type (
	message interface {
		~struct {
			Pattern string
			Channel string
			Message string
		}
	}
	notice interface {
		~struct {
			Kind    string
			Channel string
			Count   int64
		}
	}
	pubsubMessage struct{ Pattern, Channel, Message string }
	pubsubNotice  struct {
		Kind, Channel string
		Count         int64
	}
)

// Library is a client library of the rueidis family, for the node: how to
// parse a URL into its options O, open a client C with them, and present
// one as a [Client]. It is safe for concurrent use.
type Library[O, C any] struct {
	name      string
	parse     func(url string) (O, error)
	configure func(o *O, u URL)
	open      func(o O) (C, error)
	wrap      func(c C) Client
	addrs     func(c C) []string
}

// NewLibrary returns the Library of the driver registered as name, from
// its client library's ParseURL and NewClient, configure, which sets the
// options of a DSN's clients, and hooks, which makes its PubSubHooks.
func NewLibrary[O any, C client[C, D, B, Cmd, R], D dedicated[B, Cmd, R, H], B builder[A, S, U],
	A arbitrary[A, Cmd], S channels[Cmd, SC], SC completer[Cmd], U channels[Cmd, UC], UC completer[Cmd],
	Cmd any, R result, H any, M message, N notice](
	name string, parse func(string) (O, error), configure func(*O, URL), open func(O) (C, error),
	hooks func(onMessage func(M), onNotice func(N)) H,
) *Library[O, C] {
	listen := func(c C, h Hooks) (Conn, <-chan error) {
		d, release := c.Dedicate()
		ended := d.SetPubSubHooks(hooks(
			func(m M) { h.Message(pubsubMessage(m).Channel, pubsubMessage(m).Message) },
			func(n N) { h.Subscription(pubsubNotice(n).Kind, pubsubNotice(n).Channel) },
		))
		return conn{
			subscribe: func(ctx context.Context, ch string) error {
				return d.Do(ctx, d.B().Subscribe().Channel(ch).Build()).Error()
			},
			unsubscribe: func(ctx context.Context, ch string) error {
				return d.Do(ctx, d.B().Unsubscribe().Channel(ch).Build()).Error()
			},
			close: func() { d.Close(); release() },
		}, ended
	}
	return &Library[O, C]{
		name:      name,
		parse:     parse,
		configure: configure,
		open:      open,
		wrap: func(c C) Client {
			return adapter{
				do:     func(ctx context.Context, cmd Command) (any, error) { return do(ctx, c, cmd) },
				listen: func(h Hooks) (Conn, <-chan error) { return listen(c, h) },
				close:  c.Close,
			}
		},
		addrs: func(c C) []string { return slices.Sorted(maps.Keys(c.Nodes())) },
	}
}

// do sends cmd on c.
func do[B builder[A, S, U], A arbitrary[A, Cmd], S, U, Cmd any, R result](ctx context.Context, c coreClient[B, Cmd, R], cmd Command) (any, error) {
	v, err := c.Do(ctx, c.B().Arbitrary(cmd.Head...).Keys(cmd.Keys...).Args(cmd.Tail...).Build()).ToAny()
	var nilReply interface{ IsNil() bool }
	if errors.As(err, &nilReply) && nilReply.IsNil() {
		return nil, nil
	}
	return v, err
}

// OpenConnector returns the connector of a DSN: redis:// and rediss://
// URLs, one per node, with the algorithm's parameters (redlock.ParseDSN)
// and ca_file. Its nodes open their clients at their first request.
func (l *Library[O, C]) OpenConnector(dsn string) (driver.Connector, error) {
	return l.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection of the
// nodes' clients, their publish/subscribe ones included, dialed by dial
// (nil means the clients' own net.Dialer). TLS runs over it.
func (l *Library[O, C]) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	return redlock.NewDSNConnector(dsn, func(i int, raw string) (func() redlock.Node, error) {
		newNode, err := l.nodes(raw, dial)
		if err != nil {
			return nil, fmt.Errorf("%s: URL #%d of the DSN: %w", l.name, i+1, err)
		}
		return newNode, nil
	})
}

// Node returns a node of one of a DSN's URLs, without the algorithm's
// parameters, that opens its client at its first request.
func (l *Library[O, C]) Node(raw string) (redlock.Node, error) {
	newNode, err := l.nodes(raw, nil)
	if err != nil {
		return nil, err
	}
	return newNode(), nil
}

// nodes parses a node's URL, and returns a function that makes a node of
// it, whose connections dial dials (nil: the client's own dialer).
func (l *Library[O, C]) nodes(raw string, dial driver.DialFunc) (func() redlock.Node, error) {
	u, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	u.NetDial = dial
	o, err := l.parse(u.Raw)
	if err != nil {
		return nil, err
	}
	l.configure(&o, u)
	open := func() (Client, error) {
		c, err := l.open(o)
		if err != nil {
			return nil, err
		}
		return l.wrap(c), nil
	}
	addr := redlock.URLAddr(raw)
	return func() redlock.Node { return Lazy(open, addr) }, nil
}

// Clients opens a client for each of urls, as for the nodes of a DSN of
// those URLs. The caller closes them.
func (l *Library[O, C]) Clients(urls []string) ([]C, error) {
	var clients []C
	for _, raw := range urls {
		u, err := parseURL(raw)
		if err != nil {
			return clients, err
		}
		o, err := l.parse(u.Raw)
		if err != nil {
			return clients, err
		}
		l.configure(&o, u)
		c, err := l.open(o)
		if err != nil {
			return clients, err
		}
		clients = append(clients, c)
	}
	return clients, nil
}

// New returns a connector over clients the caller owns, one per
// independent master.
func (l *Library[O, C]) New(clients []C, opts ...redlock.Option) (driver.Connector, error) {
	nodes := make([]redlock.Node, len(clients))
	for i, c := range clients {
		if any(c) == nil {
			return nil, fmt.Errorf("%s: client %d is nil", l.name, i)
		}
		nodes[i] = New(l.wrap(c), fmt.Sprintf("client %d (%s)", i, strings.Join(l.addrs(c), ",")))
	}
	return redlock.NewConnector(nodes, opts...)
}

// adapter is a Client made of a client's methods.
type adapter struct {
	do     func(ctx context.Context, cmd Command) (any, error)
	listen func(h Hooks) (Conn, <-chan error)
	close  func()
}

func (a adapter) Do(ctx context.Context, cmd Command) (any, error) { return a.do(ctx, cmd) }
func (a adapter) Listen(h Hooks) (Conn, <-chan error)              { return a.listen(h) }
func (a adapter) Close()                                           { a.close() }

// conn is a Conn made of a dedicated connection's methods.
type conn struct {
	subscribe, unsubscribe func(ctx context.Context, channel string) error
	close                  func()
}

func (c conn) Subscribe(ctx context.Context, ch string) error   { return c.subscribe(ctx, ch) }
func (c conn) Unsubscribe(ctx context.Context, ch string) error { return c.unsubscribe(ctx, ch) }
func (c conn) Close()                                           { c.close() }
