package redlock

import (
	"strings"
	"testing"
)

// hashTag returns what Redis Cluster hashes to find a key's slot: the
// text between the key's first '{' and the first '}' after it, unless
// that is empty or there is none; the whole key otherwise.
func hashTag(key string) string {
	s := strings.IndexByte(key, '{')
	if s < 0 {
		return key
	}
	e := strings.IndexByte(key[s+1:], '}')
	if e <= 0 {
		return key
	}
	return key[s+1 : s+1+e]
}

// The scripts that touch a lock key and its fencing counter run on a
// cluster only if both hash to one slot (CROSSSLOT otherwise): they must
// share a hash tag, whatever the key, braces included. A key that starts
// with '}' once gave its lock key an empty tag, so each name was hashed
// whole, apart. The names must stay distinct: no two keys share a lock
// key, and no lock key is a counter. (Keys hold no NUL: the core refuses
// them.)
func TestKeys_lockAndCounterShareASlot(t *testing.T) {
	keys := []string{"a", "}", "}a", "}}", "}a{b}", "a}", "{", "{}", "{a}", "a{b}", "a{}b", "{}}", "ключ"}
	for _, prefix := range []string{DefaultKeyPrefix, "", "p:", "p{", "p}", "{p}:"} {
		r := &Redlock{cfg: config{prefix: prefix}}
		names := make(map[string]string) // lock keys and counters, to the key they belong to
		for _, k := range keys {
			lk := r.lockKey(k)
			fk := r.fenceKey(lk)
			if hashTag(lk) != hashTag(fk) {
				t.Errorf("prefix %q, key %q: lock key %q hashes on %q, its counter %q on %q", prefix, k, lk, hashTag(lk), fk, hashTag(fk))
			}
			for _, name := range []string{lk, fk} {
				if other, ok := names[name]; ok {
					t.Errorf("prefix %q: keys %q and %q share the name %q", prefix, other, k, name)
				}
				names[name] = k
			}
		}
	}
}
