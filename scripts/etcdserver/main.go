// Command etcdserver is etcd v3.6.17 for the test cluster of
// scripts/services.d/etcd.sh, which builds it into its cache and names the
// binary distlock-etcd. It is etcd's own main (etcdmain), flags and all.
//
// It lives in a module of its own, with every requirement in go.mod and
// go.sum, so that a build downloads only what it compiles and resolves no
// module graph, and so that etcd's dependencies stay out of the library's
// go.mod. Where etcd and cmd/distlock share a module (gRPC, protobuf,
// etcd's client, golang.org/x/sys), go.mod requires cmd/distlock's version:
// the packages compiled for one are then in the build cache for the other.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
