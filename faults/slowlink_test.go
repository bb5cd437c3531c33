package faults_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"
	_ "github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/internal/testenv"
)

// Tried as a new user would: Redlock with every default, five nodes each
// behind a link of 60ms or 200ms round trip. Before the node timeout
// adapted to the round trips, its fixed 50ms failed every request at
// 60ms. Each acquire+release must succeed at the first try, the first
// one included (no round trip is known yet then), and take about two
// round trips.
func TestSlowLinks_redlockDefaultsWork(t *testing.T) {
	addrs := testenv.RedisAddrs(t)
	for _, rtt := range []time.Duration{60 * time.Millisecond, 200 * time.Millisecond} {
		links := make([]string, len(addrs))
		for i, a := range addrs {
			l := proxy(t, "redis-"+a, a)
			l.delay(t, rtt)
			links[i] = "redis://" + l.addr()
		}
		dsn := strings.Join(links, ",")
		for _, drv := range []string{"goredis", "redigo"} {
			t.Run(drv+"/rtt="+rtt.String(), func(t *testing.T) {
				c, err := lock.Open(drv, dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var took []time.Duration
				for i := range 5 {
					start := time.Now()
					l, err := c.TryAcquire(ctx, "slowlink/"+drv+"/"+rtt.String())
					if err != nil {
						t.Fatalf("acquisition %d over a %v round trip, with the defaults: %v", i+1, rtt, err)
					}
					if err := l.Release(ctx); err != nil {
						t.Fatalf("release %d over a %v round trip: %v", i+1, rtt, err)
					}
					took = append(took, time.Since(start))
				}
				if s := c.Stats(); s.Failed != 0 {
					t.Errorf("%d attempts failed on the way", s.Failed)
				}
				slices.Sort(took)
				t.Logf("%s over %v round trips, defaults (%v): acquire+release p50 %v, max %v", drv, rtt, c, took[2].Round(time.Millisecond), took[4].Round(time.Millisecond))
				if p50 := took[2]; p50 < 2*rtt {
					t.Errorf("acquire+release took %v, under two round trips of %v: the link's latency is not in place", p50, rtt)
				}
			})
		}
	}
}
