package redigo_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/redistest"
)

// password is put in DSNs to check that no error repeats it.
const password = "hunter2-s3cret"

func TestOpen_badDSN(t *testing.T) {
	for _, tc := range []struct{ name, dsn string }{
		{"empty", ""},
		{"scheme", "http://:" + password + "@127.0.0.1:7001"},
		{"noHost", "redis://:" + password + "@/0"},
		{"port", "redis://:" + password + "@127.0.0.1:99999"},
		{"path", "redis://:" + password + "@127.0.0.1:7001/db0"},
		{"database", "redis://:" + password + "@127.0.0.1:7001/99999999999"},
		{"unknownParam", "redis://:" + password + "@127.0.0.1:7001?pool_sise=3"},
		{"readTimeout", "redis://:" + password + "@127.0.0.1:7001?read_timeout=1s"}, // the node timeout bounds reads
		{"badDuration", "redis://:" + password + "@127.0.0.1:7001?dial_timeout=soon"},
		{"zeroDialTimeout", "redis://:" + password + "@127.0.0.1:7001?dial_timeout=0s"},
		{"negativeConns", "redis://:" + password + "@127.0.0.1:7001?max_idle_conns=-1"},
		{"skipVerifyPlain", "redis://:" + password + "@127.0.0.1:7001?skip_verify=true"},
		{"skipVerifyBad", "rediss://:" + password + "@127.0.0.1:7001?skip_verify=maybe"},
		{"nodeTimeout", "redis://:" + password + "@127.0.0.1:7001?node_timeout=-1s"},
		{"secondURL", "redis://127.0.0.1:7001,redis://" + password + "@127.0.0.1:7002/x"},
		{"sameNodeTwice", "redis://127.0.0.1:7001,redis://:" + password + "@127.0.0.1:7001/1"},
		{"malformed", "redis://:" + password + "@127.0.0.1:7001/%zz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lock.Open("redigo", tc.dsn)
			if err == nil {
				c.Close()
				t.Fatalf("DSN %q was accepted", tc.dsn)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("the error repeats the password: %v", err)
			}
			t.Log(err)
		})
	}
}

func TestOpen_goodDSN(t *testing.T) {
	for _, dsn := range []string{
		"redis://127.0.0.1:7001",
		"redis://127.0.0.1", // port 6379
		"redis://:pw@localhost:7001/0,rediss://user:pw@127.0.0.2:7002/3?skip_verify=true,redis://pw@[::1]:7003/",
		"redis://127.0.0.1:7001?dial_timeout=1s&write_timeout=3s&max_idle_conns=4&max_active_conns=5" +
			"&idle_timeout=1m&conn_max_lifetime=1h&client_name=me&node_timeout=20ms&fencing=true&key_prefix=x:",
	} {
		c, err := lock.Open("redigo", dsn)
		if err != nil {
			t.Errorf("Open(%q) = %v", dsn, err)
			continue
		}
		c.Close()
	}
}

// A password the server refuses fails the acquisition as an unavailable
// node, not as a held key, and the error does not repeat it.
func TestAcquire_wrongPassword(t *testing.T) {
	addrs := redistest.Servers(t)
	c, err := lock.Open("redigo", "redis://:"+password+"@"+addrs[0]+"?node_timeout=500ms")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.TryAcquire(ctx, "wrong-password")
	if err == nil {
		t.Fatal("TryAcquire succeeded with a password the server does not have")
	}
	if errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("TryAcquire = %v; a refused AUTH is not a held key", err)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("the error repeats the password: %v", err)
	}
	if !strings.Contains(err.Error(), addrs[0]) {
		t.Errorf("the error does not name the node %s: %v", addrs[0], err)
	}
}
