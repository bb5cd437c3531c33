// Package pipenode is the Redlock node over an auto-pipelining client:
// github.com/redis/rueidis and its fork github.com/valkey-io/valkey-go,
// whose APIs are twins but whose types are not. The node is written once,
// here, over a [Client]; drivers/rueidis and drivers/valkey each supply
// that small adapter over their client.
//
// The package is in the core module and imports no client, so neither
// driver's module pulls in the other's client.
package pipenode
