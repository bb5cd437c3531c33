// Package fencing holds fencing tokens: numbers that strictly increase with
// every acquisition of a lock's key, so that the resource a lock protects can
// reject a request from a holder whose lock has since been taken by someone
// else (after a GC pause, a slow network or a clock jump).
//
// A lock alone cannot prevent that: a lock with a TTL can always outlive its
// holder's belief that it still holds it. The holder passes its token along
// with every write; the resource remembers the highest token it has seen for
// the key and refuses anything lower.
package fencing

import "strconv"

// Token is a fencing token. Tokens of one key strictly increase with each
// acquisition of that key; tokens of different keys are unrelated. The zero
// Token is never issued by a lock and stands for "no token".
type Token uint64

// Compare returns -1 if t is older than u, 0 if they are equal and +1 if t
// is newer.
func (t Token) Compare(u Token) int {
	switch {
	case t < u:
		return -1
	case t > u:
		return +1
	}
	return 0
}

// Newer reports whether t was issued after u for the same key.
func (t Token) Newer(u Token) bool { return t > u }

// IsZero reports whether t is the zero Token, which is never issued.
func (t Token) IsZero() bool { return t == 0 }

// String returns t in decimal.
func (t Token) String() string { return strconv.FormatUint(uint64(t), 10) }
