// Command natsserver is nats-server v2.15.3 for the test cluster of
// scripts/services.d/nats.sh, with shorter Raft timings than its
// defaults, of the order that nats-server's own cluster tests use.
//
// A NATS stream's followers elect a new leader 4 to 9 seconds after the
// last heartbeat of the old one, and nats-server has no setting for that.
// The driver's tests size their TTLs and request timeouts to outlast an
// election, and the fault tests kill and hang leaders, so those seconds
// made the driver's tests take minutes. Here heartbeats go every 100ms and
// elections start after 0.5 to 1s without one. Everything else is the
// server's own: the flags and the configuration file are nats-server's.
// Production clusters keep the defaults; the driver's defaults
// (request_timeout 10s) are sized for them. The timings are variables of
// package server that its tests set; go:linkname reaches them, so a new
// nats-server version must be checked to still have them (the build
// fails if a name is gone).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
	_ "unsafe" // for go:linkname

	"github.com/nats-io/nats-server/v2/server"
)

// The Raft timings of package server, which it keeps in variables for its
// own tests.
var (
	//go:linkname hbInterval github.com/nats-io/nats-server/v2/server.hbInterval
	hbInterval time.Duration
	//go:linkname minElectionTimeout github.com/nats-io/nats-server/v2/server.minElectionTimeout
	minElectionTimeout time.Duration
	//go:linkname maxElectionTimeout github.com/nats-io/nats-server/v2/server.maxElectionTimeout
	maxElectionTimeout time.Duration
	//go:linkname lostQuorumInterval github.com/nats-io/nats-server/v2/server.lostQuorumInterval
	lostQuorumInterval time.Duration
	//go:linkname lostQuorumCheck github.com/nats-io/nats-server/v2/server.lostQuorumCheck
	lostQuorumCheck time.Duration
)

func main() {
	hbInterval = 100 * time.Millisecond
	minElectionTimeout, maxElectionTimeout = 500*time.Millisecond, time.Second
	lostQuorumInterval, lostQuorumCheck = 2*time.Second, 4*hbInterval

	const exe = "nats-server"
	fs := flag.NewFlagSet(exe, flag.ExitOnError)
	opts, err := server.ConfigureOptions(fs, os.Args[1:], server.PrintServerAndExit, fs.Usage, server.PrintTLSHelpAndDie)
	switch {
	case errors.Is(err, server.ErrConfigReloadNotSupported):
		fmt.Fprintf(os.Stderr, "%s: %s\n", exe, err)
		os.Exit(3)
	case err != nil:
		server.PrintAndDie(fmt.Sprintf("%s: %s", exe, err))
	}
	server.RedactArgs(os.Args)
	s, err := server.NewServer(opts)
	if err != nil {
		server.PrintAndDie(fmt.Sprintf("%s: %s", exe, err))
	}
	s.ConfigureLogger()
	if err := server.Run(s); err != nil {
		server.PrintAndDie(err.Error())
	}
	s.WaitForShutdown()
}
