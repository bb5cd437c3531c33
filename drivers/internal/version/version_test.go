package version

import "testing"

func TestBefore(t *testing.T) {
	for _, c := range []struct {
		v     string
		major int
		minor int
		patch int
		want  bool
	}{
		{"2.6.11", 2, 6, 12, true}, {"2.6.12", 2, 6, 12, false}, {"2.8", 2, 6, 12, false},
		{"2.6", 2, 6, 12, true}, {"7.2.4", 2, 6, 12, false}, {"garbage", 2, 6, 12, true},
		{"3.5.10", 3, 5, 11, true}, {"3.5.11", 3, 5, 11, false}, {"3.6.0", 3, 5, 11, false},
		{"3.4.30", 3, 5, 11, true},
	} {
		if got := Before(c.v, c.major, c.minor, c.patch); got != c.want {
			t.Errorf("Before(%q, %d.%d.%d) = %v, want %v", c.v, c.major, c.minor, c.patch, got, c.want)
		}
	}
}
