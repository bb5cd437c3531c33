package zookeeper

import (
	"strconv"
	"strings"
)

// Node names. A key is the node root/<escaped key>; each attempt to take it
// is an ephemeral sequential child <value>.<sequence>, so that the value
// (unique to one acquisition, and letters, digits, '-' and '_' only) names
// the attempt's node before the server has answered: after a lost reply, an
// attempt finds its own node by that prefix (the "protected" recipe).

// escapeKey returns key as one valid node name: every byte outside
// [A-Za-z0-9_-] becomes %XX. The result is never "." or "..", holds no '/',
// no control character and none of the code points ZooKeeper refuses
// (U+D800-U+F8FF, U+FFF0-U+FFFF), and distinct keys give distinct names.
func escapeKey(key string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(key) * 3)
	for i := 0; i < len(key); i++ {
		c := key[i]
		if plain(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func plain(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// unescapeKey reverses escapeKey, and reports false for a name escapeKey
// cannot have made.
func unescapeKey(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case plain(c):
			b.WriteByte(c)
		case c == '%' && i+2 < len(name):
			v, err := strconv.ParseUint(name[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", false
		}
	}
	return b.String(), true
}

// movedMark starts the name of a holder's node moved to another session
// (see conn.move): it comes before every attempt.
const movedMark = "+"

// attemptPrefix is the name of value's node before the server appends the
// sequence number; moved marks a holder's node moved to another session.
func attemptPrefix(value string, moved bool) string {
	if moved {
		return movedMark + value + "."
	}
	return value + "."
}

// attempt is a child of a key's node, parsed.
type attempt struct {
	name  string
	value string
	moved bool
	seq   int64
}

// parseAttempt parses a child's name, [+]value.sequence, and reports false
// for a name the driver did not make.
func parseAttempt(name string) (attempt, bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || len(name)-i-1 != 10 {
		return attempt{}, false
	}
	seq, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil {
		return attempt{}, false
	}
	value, moved := strings.CutPrefix(name[:i], movedMark)
	if value == "" {
		return attempt{}, false
	}
	return attempt{name: name, value: value, moved: moved, seq: seq}, true
}

// before reports whether a comes before b in the key's queue: a moved
// holder first, then by sequence number.
func (a attempt) before(b attempt) bool {
	if a.moved != b.moved {
		return a.moved
	}
	return a.seq < b.seq
}

// lowest returns the first attempt among children: the holder of the key.
// It reports false if there is none.
func lowest(children []string) (attempt, bool) {
	var low attempt
	found := false
	for _, name := range children {
		a, ok := parseAttempt(name)
		if ok && (!found || a.before(low)) {
			low, found = a, true
		}
	}
	return low, found
}

// findAttempt returns the name of value's node among children, if any,
// moved or not as asked.
func findAttempt(children []string, value string, moved bool) (string, bool) {
	for _, name := range children {
		if a, ok := parseAttempt(name); ok && a.value == value && a.moved == moved {
			return name, true
		}
	}
	return "", false
}
