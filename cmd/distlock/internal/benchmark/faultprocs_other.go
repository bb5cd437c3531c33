//go:build !linux

package benchmark

import (
	"context"
	"errors"
)

// errNoFaults is why no fault runs on this system: bench tells a server's
// process from others by its cwd, which it reads in /proc.
var errNoFaults = errors.New("no fault: bench finds a server's process in /proc, which this system lacks")

func serverPID(Server) (int, error)             { return 0, errNoFaults }
func killServer(Server) error                   { return errNoFaults }
func startServer(context.Context, Server) error { return errNoFaults }
func listening(string) bool                     { return false }
