package postgres

import (
	"testing"
	"time"
)

func TestInterval_roundsUp(t *testing.T) {
	for _, tc := range []struct {
		ttl  time.Duration
		want int64 // microseconds
	}{
		{10 * time.Millisecond, 10000},
		{10*time.Millisecond + time.Nanosecond, 10001},
		{10*time.Millisecond + 999*time.Nanosecond, 10001},
		{10*time.Millisecond + time.Microsecond, 10001},
		{30 * 24 * time.Hour, 30 * 24 * 3600 * 1e6},
	} {
		if got := interval(tc.ttl); !got.Valid || got.Microseconds != tc.want || got.Days != 0 || got.Months != 0 {
			t.Errorf("interval(%v) = %+v, want %dµs", tc.ttl, got, tc.want)
		}
	}
}
