package fencing

import "strconv"

// Token is a fencing token. Tokens of one key strictly increase with each
// acquisition of that key. Tokens of different keys are unrelated. The zero
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
