package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// plainConn is a connection without optional interfaces.
type plainConn struct{ driver.Conn }

// droppingConn is a connection that drops its namespace, or fails to.
type droppingConn struct {
	driver.Conn
	err     error
	dropped *bool
}

func (c droppingConn) Drop(context.Context) error {
	*c.dropped = c.err == nil
	return c.err
}

// The namespace is dropped through driver.Dropper. Without it, or when
// the drop fails, verify says what stays and that its locks expire.
func TestDropNamespace(t *testing.T) {
	var dropped bool
	ok, left, err := dropNamespace(droppingConn{dropped: &dropped}, "table t", time.Second)
	if !ok || left != "" || err != nil || !dropped {
		t.Errorf("a Dropper: dropped %v, left %q, %v", ok, left, err)
	}
	ok, left, err = dropNamespace(plainConn{}, "table t", time.Second)
	if ok || err != nil || !strings.Contains(left, "table t stays") || !strings.Contains(left, "expire") {
		t.Errorf("no Dropper: dropped %v, left %q, %v", ok, left, err)
	}
	failed := errors.New("permission denied")
	ok, left, err = dropNamespace(droppingConn{err: failed, dropped: &dropped}, "table t", time.Second)
	if ok || !errors.Is(err, failed) || !strings.Contains(left, "dropping it failed") {
		t.Errorf("a failed drop: dropped %v, left %q, %v", ok, left, err)
	}
}

// The verdict names what broke, and a settings error fails a clean run.
func TestVerdict(t *testing.T) {
	var res contentionResult
	if v := verdict(res, false); !strings.HasPrefix(v, "PASS") {
		t.Errorf("a clean run: %q", v)
	}
	if v := verdict(res, true); !strings.HasPrefix(v, "FAIL") || !strings.Contains(v, "setting") {
		t.Errorf("a clean run with a settings error: %q", v)
	}
	res.Overlaps, res.LostWrites = 3, 1
	if v := verdict(res, false); v != "FAIL: 3 overlaps, 1 lost write" {
		t.Errorf("overlaps and a lost write: %q", v)
	}
}
