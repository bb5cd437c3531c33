package valkey

import (
	"github.com/valkey-io/valkey-go"

	"github.com/distlock/lock/drivers/internal/pipenode"
)

// library is valkey-go, as package pipenode's node uses it.
var library = pipenode.NewLibrary("valkey", valkey.ParseURL, configure, valkey.NewClient, hooks)

// configure sets the options of a client for a node of a DSN.
func configure(o *valkey.ClientOption, u pipenode.URL) {
	o.DialCtxFn = u.Dial
	o.ForceSingleClient = true // a URL is one server: no CLUSTER SLOTS probe
}

// hooks are the publish/subscribe hooks of a connection that waiters
// for releases listen on.
func hooks(m func(valkey.PubSubMessage), s func(valkey.PubSubSubscription)) valkey.PubSubHooks {
	return valkey.PubSubHooks{OnMessage: m, OnSubscription: s}
}
