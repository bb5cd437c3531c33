package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/distlock/lock"
)

// exitError is a failure of a command, with the exit code it ends with.
// Its message is one line, without the "distlock: CMD: " prefix.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// failure returns an exitError with code and a message made as fmt does.
func failure(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// errHelp is returned by parse after it printed the help the user asked for.
var errHelp = errors.New("help printed")

// report prints err, if any, on stderr for command name, and returns the
// exit code it ends with: a usage error points to the command's help, and
// an error not made by failure counts as the backend's.
func report(stderr io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	e := &exitError{code: exitBackend, msg: err.Error()}
	errors.As(err, &e)
	msg := oneLine(e.msg)
	if e.code == exitUsage {
		msg += fmt.Sprintf(" (see 'distlock %s --help')", name)
	}
	fmt.Fprintf(stderr, "distlock: %s: %s\n", name, msg)
	return e.code
}

// oneLine joins the lines of a message (a backend's error may have
// several) with "; ".
func oneLine(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), "; ")
}

// command is the flag set of one command and what its help shows.
type command struct {
	name     string
	fs       *flag.FlagSet
	synopsis string // the usage line, after "Usage: "
	about    string // what the command does, in a paragraph or two
	examples string // two or three examples, one per line or continued lines
}

// newCommand returns a command whose flag set reports errors to its caller
// only: parse turns them into one-line usage errors.
func newCommand(name, synopsis, about, examples string) *command {
	fs := flag.NewFlagSet("distlock "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{name: name, fs: fs, synopsis: synopsis, about: about, examples: examples}
}

// parse parses args. On -h or --help it prints the help on stdout and
// returns errHelp; a bad flag is a usage error.
func (c *command) parse(args []string, stdout io.Writer) error {
	err := c.fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.help(stdout)
		return errHelp
	case err != nil:
		return failure(exitUsage, "%v", err)
	}
	return nil
}

// parseInterleaved is parse for a command whose positional arguments may
// come between flags (as in 'status KEY --json'); it returns them. After
// "--", everything is positional.
func (c *command) parseInterleaved(args []string, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := c.parse(args, stdout); err != nil {
			return nil, err
		}
		rest := c.fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// set reports whether the flag name was given on the command line.
func (c *command) set(name string) bool {
	found := false
	c.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// help prints the command's usage, flags and examples.
func (c *command) help(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n\nFlags:\n", c.synopsis, c.about)
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
	fmt.Fprintf(w, "\nExamples:\n%s\n", c.examples)
}

// backend is the --driver and --dsn flags that every command but bench
// takes, with their environment defaults.
type backend struct {
	driver, dsn string
}

// register adds the flags to c. Their defaults are resolved by open, not
// shown as flag defaults, so that help never prints $DISTLOCK_DSN.
func (b *backend) register(c *command) {
	c.fs.StringVar(&b.driver, "driver", "", "the lock backend: "+strings.Join(lock.Drivers(), ", ")+" (default $DISTLOCK_DRIVER)")
	c.fs.StringVar(&b.dsn, "dsn", "", "the backend's data source name, as the driver reads it (default $DISTLOCK_DSN; never printed)")
}

// open resolves the environment defaults of the flags c did not set and
// opens a client, which prints its warnings on stderr. It does not contact
// the backend. A missing or unknown driver and a DSN the driver cannot
// parse are usage errors; the driver's error does not repeat the DSN.
func (b *backend) open(c *command, stderr io.Writer) (*lock.Client, error) {
	if !c.set("driver") {
		b.driver = os.Getenv("DISTLOCK_DRIVER")
	}
	if !c.set("dsn") {
		b.dsn = os.Getenv("DISTLOCK_DSN")
	}
	drivers := lock.Drivers()
	switch {
	case b.driver == "":
		return nil, failure(exitUsage, "no driver: give --driver or set DISTLOCK_DRIVER (one of %s)", strings.Join(drivers, ", "))
	case !slices.Contains(drivers, b.driver):
		return nil, failure(exitUsage, "unknown driver %s (one of %s)", quoteArg(b.driver), strings.Join(drivers, ", "))
	}
	client, err := lock.Open(b.driver, b.dsn)
	if err != nil {
		return nil, failure(exitUsage, "%v", err)
	}
	client.SetLogger(slog.New(&warnHandler{w: stderr, prefix: "distlock: " + c.name + ": "}))
	return client, nil
}
