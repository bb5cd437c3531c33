package faults_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/internal/testenv"
)

// Worker processes contend through Redlock (goredis and redigo, fencing
// on), each node behind a toxiproxy link of the parent's, while the
// nemesis slows two links (150ms each way), resets their connections,
// stops their data (a drop: nothing passes, nothing is closed), and
// pauses holders past their TTL: no overlap, no token regression, no lost
// write.
func TestProcesses_redlockBehindBrokenLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	addrs := testenv.RedisAddrs(t)
	var links []*link
	var urls []string
	if !conformance.InWorker() {
		for _, a := range addrs {
			l := proxy(t, "redis-"+a, a)
			links = append(links, l)
			urls = append(urls, "redis://"+l.addr())
		}
	}
	// The workers learn the links' addresses from the parent.
	dsn := conformance.Shared(strings.Join(urls, ",") + "?fencing=true&key_prefix=toxic:&node_timeout=250ms")
	two := func() []*link {
		p := rand.Perm(len(links))
		return []*link{links[p[0]], links[p[1]]}
	}
	on := func(typ, attrs string, d time.Duration) func(t *testing.T) {
		return func(t *testing.T) {
			ls := two()
			done := make(chan struct{})
			go func() { ls[1].toxic(t, typ, attrs, d); close(done) }()
			ls[0].toxic(t, typ, attrs, d)
			<-done
		}
	}
	for _, drv := range []string{"goredis", "redigo"} {
		t.Run(drv, func(t *testing.T) {
			rep := conformance.RunProcesses(t, conformance.Processes{
				Open: func(t testing.TB) *lock.Client {
					c, err := lock.Open(drv, dsn)
					if err != nil {
						t.Fatal(err)
					}
					return c
				},
				Duration: conformance.SoakDuration(8 * time.Second), TTL: time.Second, Fenced: true, PauseHolders: true,
				Actions: map[string]func(*testing.T){
					"slow-links":  on("latency", `{"latency":150}`, time.Second),
					"reset-links": on("reset_peer", `{"timeout":0}`, 500*time.Millisecond),
					"drop-links":  on("timeout", `{"timeout":0}`, 500*time.Millisecond),
				},
			})
			t.Log(rep)
			conformance.RequireSafe(t, rep)
		})
	}
}
