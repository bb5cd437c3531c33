// Command distlock runs a command under a distributed lock, shows who
// holds keys, compares lock backends side by side, and checks a
// deployment.
//
//	distlock run    --driver D --dsn S --key K [--ttl T] [--wait DUR | --no-wait] -- CMD [ARGS...]
//	distlock status --driver D --dsn S [--json] KEY...
//	distlock bench  [--driver D [--dsn S]]... [--duration T] [--json F] [--svg F]
//	distlock verify --driver D --dsn S [--duration 30s] [--workers N] [--lint-only] [--json]
//
// --driver and --dsn default to $DISTLOCK_DRIVER and $DISTLOCK_DSN; bench
// takes them repeated, paired in order, and reads $DISTLOCK_BENCH first
// for several backends. A DSN's password is never printed. Run `distlock help` or `distlock CMD
// --help` for the flags and examples.
//
// Exit codes: 0 success (for run, CMD's own exit code is passed through);
// 64 bad usage; 69 the backend failed or could not be reached; 75 (run)
// the key is held by another holder, after --no-wait or once --wait
// passed; 76 (run) the lock was lost while CMD ran, and CMD was stopped;
// 126 or 127 (run) CMD could not be run; 130 (bench, verify) interrupted;
// 1 (verify) a promise was broken, or a setting can break one.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/distlock/lock"
)

// Exit codes, as the package documentation lists them.
const (
	exitOK      = 0
	exitUsage   = 64 // sysexits' EX_USAGE
	exitBackend = 69 // EX_UNAVAILABLE
	exitHeld    = 75 // EX_TEMPFAIL
	exitLost    = 76
)

func main() {
	if isVerifyWorker() {
		os.Exit(verifyWorker(openConnector))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(cli(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// cli runs the command line args and returns the exit code.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return runCmd(ctx, args[1:], stdout, stderr)
	case "status":
		return statusCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		return benchCmd(ctx, args[1:], stdout, stderr)
	case "verify":
		return verifyCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "distlock: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, strings.Replace(usageText, "DRIVERS", strings.Join(lock.Drivers(), ", "), 1))
}

// usageText is distlock's help, with DRIVERS for the drivers it knows.
const usageText = `distlock runs a command under a distributed lock, shows who holds keys,
compares lock backends, and checks a deployment.

Usage:
  distlock run    --driver D --dsn S --key K [--ttl T] [--wait DUR | --no-wait] -- CMD [ARGS...]
  distlock status --driver D --dsn S [--json] KEY...
  distlock bench  [--driver D [--dsn S]]... [--duration T] [--json FILE] [--svg FILE]
  distlock verify --driver D --dsn S [--duration 30s] [--workers N] [--lint-only] [--json]

--driver and --dsn default to $DISTLOCK_DRIVER and $DISTLOCK_DSN (bench takes
several, paired in order, or reads $DISTLOCK_BENCH first).
Drivers: DRIVERS.
Run 'distlock COMMAND --help' for a command's flags and examples.

Exit codes: 0 ok (run: CMD's own), 64 usage, 69 backend error,
75 held by another (run), 76 lock lost while CMD ran (run),
1 a promise was broken, or a setting can break one (verify),
130 interrupted (bench, verify).
`
