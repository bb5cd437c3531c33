// Package secrettest checks, for the drivers' tests, that a password
// given in a DSN or to a constructor never shows in what a driver or a
// lock.Client prints, returns or logs.
package secrettest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// Password is the distinctive password the tests put in DSNs and
// clients' options.
const Password = "s3cr3t-pw"

// Verbs are the fmt verbs a value is printed with.
var Verbs = []string{"%v", "%+v", "%s", "%#v"}

// A Checker fails its test for every text that holds [Password], naming
// what the text came from and showing it with the password elided. It is
// safe for concurrent use.
type Checker struct {
	t testing.TB

	mu   sync.Mutex
	logs []*logBuffer
}

// New returns a Checker for t. The output of the loggers and writers it
// hands out is checked when t ends, after the cleanups registered later
// (such as closing clients) have run.
func New(t testing.TB) *Checker {
	c := &Checker{t: t}
	t.Cleanup(c.checkLogs)
	return c
}

// Elide returns s with every occurrence of the password replaced, for
// messages of tests.
func Elide(s string) string { return strings.ReplaceAll(s, Password, "<password>") }

// Text checks s, which came from what.
func (c *Checker) Text(what, s string) {
	c.t.Helper()
	if strings.Contains(s, Password) {
		c.t.Errorf("%s shows the password: %s", what, Elide(s))
	}
}

// Printed checks v printed with each of [Verbs], reporting the verbs that
// show the password, if any, in one failure.
func (c *Checker) Printed(what string, v any) {
	c.t.Helper()
	var bad []string
	var text string
	for _, verb := range Verbs {
		if s := fmt.Sprintf(verb, v); strings.Contains(s, Password) {
			bad, text = append(bad, verb), s
		}
	}
	if len(bad) > 0 {
		c.t.Errorf("%s printed with %s shows the password: %s", what, strings.Join(bad, ", "), Elide(text))
	}
}

// Err checks an error that the test expects, from what: it fails the test
// if err is nil, and checks err's message and err printed with each of
// [Verbs].
func (c *Checker) Err(what string, err error) {
	c.t.Helper()
	if err == nil {
		c.t.Errorf("%s: no error, want one", what)
		return
	}
	c.MaybeErr(what, err)
}

// MaybeErr checks err, from what, if it is not nil: its message, then err
// printed with each of [Verbs].
func (c *Checker) MaybeErr(what string, err error) {
	c.t.Helper()
	switch {
	case err == nil:
	case strings.Contains(err.Error(), Password):
		c.Text("the error of "+what, err.Error())
	default:
		c.Printed("the error of "+what, err)
	}
}

// OpenFails checks that lock.Open refuses dsn, with an error that does
// not show the password.
func (c *Checker) OpenFails(driverName, dsn string) {
	c.t.Helper()
	cl, err := lock.Open(driverName, dsn)
	if err == nil {
		cl.Close()
	}
	c.Err(fmt.Sprintf("lock.Open(%q, %q)", driverName, Elide(dsn)), err)
}

// Open opens a client on dsn, which lock.Open must accept, and checks the
// client as Open returns it.
func (c *Checker) Open(driverName, dsn string) *lock.Client {
	c.t.Helper()
	cl, err := lock.Open(driverName, dsn)
	if err != nil {
		c.t.Fatalf("lock.Open(%q, %q): %s", driverName, Elide(dsn), Elide(err.Error()))
	}
	c.Printed("the *lock.Client that lock.Open returned", cl)
	return cl
}

// Writer returns a writer, for what, whose output is checked when the
// test ends.
func (c *Checker) Writer(what string) io.Writer {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := &logBuffer{what: what}
	c.logs = append(c.logs, b)
	return b
}

// Logger returns a logger at debug level, for what, whose output is
// checked when the test ends.
func (c *Checker) Logger(what string) *slog.Logger {
	return slog.New(slog.NewTextHandler(c.Writer(what), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (c *Checker) checkLogs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.logs {
		for line := range strings.Lines(b.String()) {
			c.Text(b.what, line)
		}
	}
}

// Expect says whether a client's backend should answer its Ping.
type Expect bool

const (
	// Answers expects the backend to accept the client's credentials.
	Answers Expect = true
	// Fails expects the backend to refuse them, or to be out of reach.
	Fails Expect = false
)

// Use runs a client through the operations a program makes, with a
// logger whose output is checked: Ping, TryAcquire, and, if that took the
// lock, a second TryAcquire and an Acquire of the held key that fail,
// Extend, Release twice (the second fails); if it did not, a waiting
// Acquire and Do that give up within 300ms. It checks the client, the
// lock and every error on the way, that Ping did what want says, and
// closes the client. Against a backend that answers, a TryAcquire that
// failed in passing may be followed by an Acquire and a Do that succeed.
func (c *Checker) Use(what string, cl *lock.Client, want Expect) {
	c.t.Helper()
	cl.SetLogger(c.Logger("the log of " + what))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "secrettest-" + randomHex()
	op := func(name string) string { return what + ": " + name }

	pingErr := cl.Ping(ctx)
	c.MaybeErr(op("Ping"), pingErr)
	switch {
	case want == Answers && pingErr != nil:
		c.t.Errorf("%s: Ping: %s, want it to succeed", what, Elide(pingErr.Error()))
	case want == Fails && pingErr == nil:
		c.t.Errorf("%s: Ping succeeded, want it to fail", what)
	}
	l, err := cl.TryAcquire(ctx, key, lock.WithTTL(10*time.Second))
	c.MaybeErr(op("TryAcquire"), err)
	if l != nil {
		c.Printed(op("the *lock.Lock from TryAcquire"), l)
		_, err := cl.TryAcquire(ctx, key)
		c.Err(op("TryAcquire of a held key"), err)
		short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = cl.Acquire(short, key)
		stop()
		c.Err(op("Acquire of a held key, given up"), err)
		c.MaybeErr(op("Extend"), l.Extend(ctx, 10*time.Second))
		c.MaybeErr(op("Release"), l.Release(ctx))
		c.Err(op("Release of a released lock"), l.Release(ctx))
	} else {
		// TryAcquire failed. With a backend that refuses or cannot be
		// reached, so must these; with one that answers, the failure was
		// passing (a node slow on a loaded machine, make test 2026-12-07),
		// and they may take the key.
		short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
		l, err := cl.Acquire(short, key)
		if want == Answers && l != nil {
			c.Printed(op("the *lock.Lock from Acquire"), l)
			c.MaybeErr(op("Release"), l.Release(ctx))
		} else {
			c.Err(op("Acquire, given up"), err)
		}
		err = cl.Do(short, key, func(context.Context) error { return nil })
		stop()
		if want == Answers {
			c.MaybeErr(op("Do"), err)
		} else {
			c.Err(op("Do, given up"), err)
		}
	}
	c.Printed(op("the *lock.Client after its operations"), cl)
	c.MaybeErr(op("Close"), cl.Close())
}

// Connector checks a connector that a driver returned with err: it ends
// the test if err is not nil, and checks the connector printed. It
// returns the connector.
func (c *Checker) Connector(what string, connector driver.Connector, err error) driver.Connector {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("%s: %s", what, Elide(err.Error()))
	}
	c.Printed(what, connector)
	return connector
}

// UseConnector checks a connector as Connector does, and a client opened
// on it as Use does.
func (c *Checker) UseConnector(what string, connector driver.Connector, err error, want Expect) {
	c.t.Helper()
	c.Use("a client of "+what, lock.OpenConnector(c.Connector(what, connector, err)), want)
}

// MalformedRedisDSNs returns DSNs that the Redis drivers refuse, each with
// the password, for a server at addr (host:port).
func MalformedRedisDSNs(addr string) []string {
	pw := Password
	host := strings.Split(addr, ":")[0]
	return []string{
		"",
		"u:" + pw + "@" + addr,                                // no scheme
		"http://u:" + pw + "@" + addr,                         // not redis
		"redis://u:" + pw + "@",                               // no host
		"redis://u:" + pw + "/x@" + addr,                      // a '/' in the password ends the host early
		"redis://u:" + pw + "?x@" + addr,                      // so does a '?'
		"redis://u:" + pw + "#x@" + addr,                      // and a '#'
		"redis://u:" + pw + "%zz@" + addr,                     // a bad escape
		"redis://u:" + pw + " x@" + addr,                      // a space
		"redis://u:" + pw + "@" + host + ":7x01",              // a bad port
		"redis://u:" + pw + "@[::1",                           // an unterminated IPv6 address
		"redis://u:" + pw + "@" + addr + "/x",                 // a bad database
		"redis://u:" + pw + "@" + addr + "/0/1",               // a bad path
		"redis://u:" + pw + "@" + addr + "?bogus=1",           // an unknown parameter
		"redis://u:" + pw + "@" + addr + "?dial_timeout=soon", // a bad duration
		"redis://u:" + pw + "@" + addr + "?max_retries=many",  // a bad number
		"redis://u:" + pw + "@" + addr + "?node_timeout=soon", // a bad node timeout
		"redis://u:" + pw + "@" + addr + "?fencing=maybe",     // a bad flag
		"redis://u:" + pw + "@" + addr + "?node_timeout=1s,redis://u:" + pw + "@" + addr + "?node_timeout=2s", // two values
		"redis://u:" + pw + "@" + addr + ",", // an empty URL
	}
}

// ClosedAddr returns a local address (host:port) that nothing listens on.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func randomHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// logBuffer is a buffer that loggers of several goroutines write to.
type logBuffer struct {
	what string
	mu   sync.Mutex
	b    bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
