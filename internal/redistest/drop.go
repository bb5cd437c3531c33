package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/testenv"
)

// Drop checks the Drop of the Redlock driver d on the Redis servers, with
// fencing tokens, under a key prefix with SCAN's pattern characters
// in it: it deletes the locks and the fencing counters of every node,
// and leaves alone the keys of a prefix that the pattern would match if
// it were not escaped.
func Drop(t *testing.T, d driver.Driver) { drop(t, d, Servers(t), testQuery) }

// drop is Drop on the servers at addrs, with query.
func drop(t *testing.T, d driver.Driver, addrs []string, query string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b [6]byte
	rand.Read(b[:])
	base := "dl-drop-" + hex.EncodeToString(b[:])
	prefix, neighbour := base+"-*:", base+"-x:"
	open := func(prefix string) driver.Conn {
		c := testenv.Connect(t, d, DSN(addrs, withPrefix(query+"&fencing=true", prefix)))
		t.Cleanup(func() { c.Close() })
		return c
	}
	scratch, other := open(prefix), open(neighbour)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := scratch.Acquire(ctx, k, "v"+k, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := scratch.Release(ctx, "b", "vb"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Acquire(ctx, "a", "other", time.Minute); err != nil {
		t.Fatal(err)
	}
	defer other.(driver.Dropper).Drop(context.Background())
	if n := keysUnder(t, addrs, base, prefix); n == 0 {
		t.Fatalf("no keys under %q before Drop", prefix)
	}
	// Acquire returns at a quorum's verdict: the other nodes' writes may
	// still land (once, 7 keys became 8 during Drop). Count once they have.
	before := keysUnder(t, addrs, base, neighbour)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		n := keysUnder(t, addrs, base, neighbour)
		if n == before {
			break
		}
		before = n
	}
	if err := scratch.(driver.Dropper).Drop(ctx); err != nil {
		t.Fatalf("Drop: %v", err)
	}
	if n := keysUnder(t, addrs, base, prefix); n != 0 {
		t.Errorf("%d keys under %q after Drop, want none (fencing counters included)", n, prefix)
	}
	if n := keysUnder(t, addrs, base, neighbour); n != before {
		t.Errorf("%d keys under the neighbour prefix %q after Drop, want the %d before", n, neighbour, before)
	}
	if err := scratch.(driver.Dropper).Drop(ctx); err != nil {
		t.Errorf("a second Drop: %v", err)
	}
}

// keysUnder counts the keys of the servers at addrs that start with
// prefix, scanning those that start with base, which has no pattern
// characters.
func keysUnder(t *testing.T, addrs []string, base, prefix string) int {
	t.Helper()
	n := 0
	for _, a := range addrs {
		c, err := dialRESP(a)
		if err != nil {
			t.Fatalf("counting keys on %s: %v", a, err)
		}
		cursor := "0"
		for {
			v, err := c.do("SCAN", cursor, "MATCH", base+"*", "COUNT", "1000")
			page, ok := v.([]any)
			if err != nil || !ok || len(page) != 2 {
				c.Close()
				t.Fatalf("counting keys on %s: %v, %v", a, v, err)
			}
			keys, _ := page[1].([]any)
			for _, k := range keys {
				if s, _ := k.(string); strings.HasPrefix(s, prefix) {
					n++
				}
			}
			if cursor, _ = page[0].(string); cursor == "0" || cursor == "" {
				break
			}
		}
		c.Close()
	}
	return n
}
