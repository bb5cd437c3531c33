package rueidis

import (
	"github.com/redis/rueidis"

	"github.com/distlock/lock/drivers/internal/pipenode"
)

// library is rueidis, as package pipenode's node uses it.
var library = pipenode.NewLibrary("rueidis", rueidis.ParseURL, configure, rueidis.NewClient, hooks)

// configure sets the options of a client for a node of a DSN.
func configure(o *rueidis.ClientOption, u pipenode.URL) {
	o.DialCtxFn = u.Dial
	o.ForceSingleClient = true // a URL is one server: no CLUSTER SLOTS probe
}

// hooks are the publish/subscribe hooks of a connection that waiters
// for releases listen on.
func hooks(m func(rueidis.PubSubMessage), s func(rueidis.PubSubSubscription)) rueidis.PubSubHooks {
	return rueidis.PubSubHooks{OnMessage: m, OnSubscription: s}
}
