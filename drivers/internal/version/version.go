// Package version compares the dotted version numbers that servers report
// of themselves, for the drivers' settings checks.
package version

import (
	"strconv"
	"strings"
)

// Before reports whether v, such as "7.2.4" or "3.5", is before the version
// whose parts are want (major, minor, patch...). A part of v that is
// missing or not a number counts as 0.
func Before(v string, want ...int) bool {
	parts := strings.SplitN(v, ".", len(want))
	for i, w := range want {
		got := 0
		if i < len(parts) {
			got, _ = strconv.Atoi(parts[i])
		}
		if got != w {
			return got < w
		}
	}
	return false
}
