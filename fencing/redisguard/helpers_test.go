package redisguard_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/redisguard"
	"github.com/distlock/lock/internal/redistest"
)

// newClient returns a client of the first test server, closed when the
// test ends, skipping the test without servers.
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redistest.Servers(t)[0], ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// fixture is a guard with a key prefix no other test uses, whose keys are
// deleted when the test ends.
type fixture struct {
	c    *redis.Client
	g    *redisguard.Guard
	base string // begins every key of the test
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	c := newClient(t)
	b := make([]byte, 6)
	rand.Read(b)
	base := "distlock:test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, base+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("deleting the test's keys: %v", err)
		}
	})
	return &fixture{c: c, g: redisguard.New(c, redisguard.Config{Prefix: base + "fence:"}), base: base}
}

// key returns a protected key of resource, sharing its hash tag.
func (f *fixture) key(resource, name string) string {
	return f.base + "{" + resource + "}:" + name
}

// fence returns the fence of resource as stored, "" if there is none.
func (f *fixture) fence(t testing.TB, resource string) string {
	t.Helper()
	v, err := f.c.Get(t.Context(), f.g.FenceKey(resource)).Result()
	if err == redis.Nil {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// setFence stores token as resource's fence.
func (f *fixture) setFence(t testing.TB, resource, token string) {
	t.Helper()
	if err := f.c.Set(t.Context(), f.g.FenceKey(resource), token, 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// wantStale fails the test unless err is a *fencing.StaleError for
// resource and token, matching fencing.ErrStale, naming newest.
func wantStale(t testing.TB, err error, resource string, token, newest fencing.Token) {
	t.Helper()
	var se *fencing.StaleError
	if !errors.As(err, &se) || !errors.Is(err, fencing.ErrStale) {
		t.Fatalf("err = %v, want a *fencing.StaleError matching fencing.ErrStale", err)
	}
	if *se != (fencing.StaleError{Resource: resource, Token: token, Newest: newest}) {
		t.Fatalf("StaleError = %+v, want {%q %d %d}", *se, resource, token, newest)
	}
}
