package zookeeper

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// validName reports whether ZooKeeper accepts name as a node name (its
// PathUtils.validatePath, for one path element).
func validName(name string) bool {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r == 0 || r < 0x20 || 0x7f <= r && r <= 0x9f || 0xd800 <= r && r <= 0xf8ff || 0xfff0 <= r {
			return false
		}
	}
	return true
}

func TestEscapeKey_validDistinctAndReversible(t *testing.T) {
	keys := []string{"a", "A", ".", "..", "zookeeper", "a/b", "/", "a b", "a\nb", "\x7f\u0085", "ключ", "鍵", "🔒",
		"\ue000", "\ufff0", "%", "%25", "a%2Fb", "a.b", "-_", strings.Repeat("/", 512)}
	seen := map[string]string{}
	for _, k := range keys {
		n := escapeKey(k)
		if !validName(n) {
			t.Errorf("escapeKey(%q) = %q: not a valid node name", k, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("escapeKey(%q) = escapeKey(%q) = %q", k, other, n)
		}
		seen[n] = k
		if back, ok := unescapeKey(n); !ok || back != k {
			t.Errorf("unescapeKey(escapeKey(%q)) = %q, %v", k, back, ok)
		}
	}
}

func FuzzEscapeKey(f *testing.F) {
	f.Add("a/b")
	f.Add("..")
	f.Fuzz(func(t *testing.T, k string) {
		if k == "" {
			return // the core refuses empty keys
		}
		n := escapeKey(k)
		if !validName(n) {
			t.Fatalf("escapeKey(%q) = %q: not a valid node name", k, n)
		}
		if back, ok := unescapeKey(n); !ok || back != k {
			t.Fatalf("unescapeKey(escapeKey(%q)) = %q, %v", k, back, ok)
		}
	})
}

func TestLowest_movedHolderFirst(t *testing.T) {
	kids := []string{"v3.0000000007", "v1.0000000002", "foreign", "+v2.0000000009", "v4.0000000001x"}
	low, ok := lowest(kids)
	if !ok || low.name != "+v2.0000000009" || !low.moved || low.value != "v2" {
		t.Errorf("lowest = %+v, %v; want the moved holder +v2", low, ok)
	}
	low, ok = lowest(kids[:3])
	if !ok || low.value != "v1" || low.seq != 2 {
		t.Errorf("lowest = %+v, %v; want v1", low, ok)
	}
	if _, ok := lowest([]string{"foreign", "x.1"}); ok {
		t.Error("lowest found an attempt among names the driver does not make")
	}
	if n, ok := findAttempt(kids, "v2", true); !ok || n != "+v2.0000000009" {
		t.Errorf("findAttempt(v2, moved) = %q, %v", n, ok)
	}
	if _, ok := findAttempt(kids, "v2", false); ok {
		t.Error("findAttempt(v2, not moved) found the moved node")
	}
}
