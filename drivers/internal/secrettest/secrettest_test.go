package secrettest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures and runs its cleanups
// when told, so that the checks can be seen to fail.
type recorder struct {
	testing.TB
	failures []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// leaky holds the password in a field, unexported, and prints it.
type leaky struct{ dsn string }

// TestChecker_fails checks that every check fails on the password, and
// that the failures do not repeat it.
func TestChecker_fails(t *testing.T) {
	for name, check := range map[string]func(*Checker){
		"Text":        func(c *Checker) { c.Text("a text", "dsn=redis://:"+Password+"@h") },
		"Printed":     func(c *Checker) { c.Printed("a value", &leaky{"redis://:" + Password + "@h"}) },
		"Err":         func(c *Checker) { c.Err("an operation", errors.New("dial redis://:"+Password+"@h")) },
		"ErrNil":      func(c *Checker) { c.Err("an operation", nil) },
		"ErrWrapped":  func(c *Checker) { c.Err("an operation", fmt.Errorf("open: %w", wrapped{Password})) },
		"MaybeErr":    func(c *Checker) { c.MaybeErr("an operation", errors.New(Password)) },
		"Logger":      func(c *Checker) { c.Logger("a log").Info("connecting", "dsn", "redis://:"+Password+"@h") },
		"LoggerDebug": func(c *Checker) { c.Logger("a log").Debug("connecting", "password", Password) },
		"Writer":      func(c *Checker) { fmt.Fprintf(c.Writer("a package's log"), "dial %s\n", Password) },
	} {
		t.Run(name, func(t *testing.T) {
			r := &recorder{TB: t}
			check(New(r))
			r.end()
			if len(r.failures) == 0 {
				t.Fatal("no failure")
			}
			for _, f := range r.failures {
				if strings.Contains(f, Password) {
					t.Errorf("the failure repeats the password: %s", f)
				}
			}
		})
	}
}

// wrapped is an error whose message is clean but whose %#v is not.
type wrapped struct{ secret string }

func (w wrapped) Error() string { return "refused" }

// TestChecker_passes checks that clean texts pass.
func TestChecker_passes(t *testing.T) {
	r := &recorder{TB: t}
	c := New(r)
	c.Text("a text", "redis://h:6379")
	c.Printed("a value", &leaky{"redis://h:6379"})
	c.Err("an operation", errors.New("refused"))
	c.MaybeErr("an operation", nil)
	c.Logger("a log").Debug("connecting", "addr", "h:6379")
	r.end()
	if len(r.failures) > 0 {
		t.Errorf("failures: %q", r.failures)
	}
}
