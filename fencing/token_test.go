package fencing_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/distlock/lock/fencing"
)

func TestToken_compare(t *testing.T) {
	cases := []struct {
		t, u  fencing.Token
		cmp   int
		newer bool
	}{
		{1, 2, -1, false},
		{2, 1, +1, true},
		{7, 7, 0, false},
		{0, 1, -1, false},
		{math.MaxUint64, math.MaxUint64 - 1, +1, true},
	}
	for _, c := range cases {
		if got := c.t.Compare(c.u); got != c.cmp {
			t.Errorf("Token(%d).Compare(%d) = %d, want %d", c.t, c.u, got, c.cmp)
		}
		if got := c.t.Newer(c.u); got != c.newer {
			t.Errorf("Token(%d).Newer(%d) = %v, want %v", c.t, c.u, got, c.newer)
		}
	}
}

func TestToken_string(t *testing.T) {
	for tok, want := range map[fencing.Token]string{0: "0", 42: "42", math.MaxUint64: "18446744073709551615"} {
		if got := tok.String(); got != want {
			t.Errorf("Token(%d).String() = %q, want %q", uint64(tok), got, want)
		}
	}
	if !fencing.Token(0).IsZero() || fencing.Token(1).IsZero() {
		t.Error("IsZero is true only for the zero Token")
	}
}

func ExampleToken_Newer() {
	// The protected resource keeps the newest token it has seen per key
	// and refuses anything that is not newer.
	newest := fencing.Token(33)
	for _, tok := range []fencing.Token{34, 33, 35} {
		if tok.Newer(newest) {
			newest = tok
			fmt.Println("accept", tok)
		} else {
			fmt.Println("refuse", tok)
		}
	}
	// Output:
	// accept 34
	// refuse 33
	// accept 35
}
