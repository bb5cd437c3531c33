package redisguard_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestSet_writesWithTheAdmission(t *testing.T) {
	f := newFixture(t)
	k := f.key("r", "v")
	if err := f.g.Set(t.Context(), "r", 5, k, "five"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.c.Get(t.Context(), k).Result(); got != "five" || f.fence(t, "r") != "5" {
		t.Fatalf("value, fence = %q, %q; want \"five\", \"5\"", got, f.fence(t, "r"))
	}
}

func TestSet_staleTokenWritesNothing(t *testing.T) {
	f := newFixture(t)
	k := f.key("r", "v")
	f.setFence(t, "r", "5")
	wantStale(t, f.g.Set(t.Context(), "r", 4, k, "four"), "r", 4, 5)
	if n, _ := f.c.Exists(t.Context(), k).Result(); n != 0 {
		t.Fatal("a stale Set wrote its key")
	}
	if got := f.fence(t, "r"); got != "5" {
		t.Fatalf("fence = %q, want \"5\"", got)
	}
}

func TestHSet_writesWithTheAdmission(t *testing.T) {
	f := newFixture(t)
	k := f.key("r", "h")
	if err := f.g.HSet(t.Context(), "r", 5, k, "a", "1", "b", "2"); err != nil {
		t.Fatal(err)
	}
	got, _ := f.c.HGetAll(t.Context(), k).Result()
	if len(got) != 2 || got["a"] != "1" || got["b"] != "2" || f.fence(t, "r") != "5" {
		t.Fatalf("hash, fence = %v, %q; want map[a:1 b:2], \"5\"", got, f.fence(t, "r"))
	}
}

func TestHSet_staleTokenWritesNothing(t *testing.T) {
	f := newFixture(t)
	k := f.key("r", "h")
	f.setFence(t, "r", "5")
	wantStale(t, f.g.HSet(t.Context(), "r", 4, k, "a", "1"), "r", 4, 5)
	if n, _ := f.c.Exists(t.Context(), k).Result(); n != 0 {
		t.Fatal("a stale HSet wrote its key")
	}
}

// More fields than Lua's unpack takes at once.
func TestHSet_manyFields(t *testing.T) {
	f := newFixture(t)
	k := f.key("r", "h")
	const n = 20000
	fv := make([]string, 0, 2*n)
	for i := range n {
		fv = append(fv, "f"+strconv.Itoa(i), strconv.Itoa(i))
	}
	if err := f.g.HSet(t.Context(), "r", 1, k, fv...); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.c.HLen(t.Context(), k).Result(); got != n {
		t.Fatalf("HLEN = %d, want %d", got, n)
	}
	if got, _ := f.c.HGet(t.Context(), k, "f19999").Result(); got != "19999" {
		t.Fatalf("f19999 = %q, want \"19999\"", got)
	}
}

func TestHSet_oddArguments(t *testing.T) {
	f := newFixture(t)
	for _, fv := range [][]string{nil, {"a"}, {"a", "1", "b"}} {
		if err := f.g.HSet(t.Context(), "r", 1, f.key("r", "h"), fv...); err == nil || !strings.Contains(err.Error(), "pairs") {
			t.Errorf("HSet with %q = %v, want an error about pairs", fv, err)
		}
	}
	if got := f.fence(t, "r"); got != "" {
		t.Fatalf("fence = %q after refused calls, want none", got)
	}
}

// A write that fails raises no fence: the script writes before it raises.
func TestHSet_wrongTypeRaisesNothing(t *testing.T) {
	f := newFixture(t)
	k := f.key("r", "list")
	f.c.RPush(t.Context(), k, "x")
	f.setFence(t, "r", "3")
	err := f.g.HSet(t.Context(), "r", 4, k, "a", "1")
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("HSet on a list = %v, want WRONGTYPE", err)
	}
	if got := f.fence(t, "r"); got != "3" {
		t.Fatalf("fence = %q after a failed write, want \"3\"", got)
	}
}

// A fence key of the wrong type fails the call, and writes nothing.
func TestSet_fenceOfWrongType(t *testing.T) {
	f := newFixture(t)
	f.c.RPush(t.Context(), f.g.FenceKey("r"), "x")
	k := f.key("r", "v")
	if err := f.g.Set(t.Context(), "r", 4, k, "v"); err == nil {
		t.Fatal("Set over a fence that is a list succeeded")
	}
	if _, err := f.c.Get(t.Context(), k).Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET of the protected key: %v, want redis.Nil", err)
	}
}
