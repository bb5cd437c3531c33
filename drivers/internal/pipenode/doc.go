// Package pipenode is the Redlock node over an auto-pipelining client:
// github.com/redis/rueidis and its fork github.com/valkey-io/valkey-go.
// Their APIs are twins, but their types are not. So the node is written
// once, here, and each driver hands [NewLibrary] its library's ParseURL,
// NewClient, a function that sets a DSN client's options, and one that
// makes its PubSubHooks. Go infers the rest (the builders, commands and
// results) from the methods the two clients share.
//
// It lives in the core module and imports no client. drivers/rueidis then
// requires rueidis only, and drivers/valkey valkey-go only.
//
// Commands go through the client's Do, which pipelines the commands of
// concurrent callers on a shared connection. Waiters for a release listen
// on a connection that the client dedicates to publish/subscribe, as the
// other Redis drivers do.
package pipenode
