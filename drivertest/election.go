package drivertest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/latency"
	"github.com/distlock/lock/internal/netfault"
)

// RunElection runs an election among worker processes on the driver,
// with the safe run's settings and nemesis, in the subtest "election"
// (see conformance.RunElection). The nemesis also kills and pauses the
// leader. It requires the run safe: at most one term at a time, tokens
// increasing, no lost write, nothing left a TTL after the run. And it
// requires that leaders were killed and that the lead moved.
func (r ProcessRuns) RunElection(t *testing.T) {
	r = r.ready(t)
	t.Run("election", func(t *testing.T) {
		rep := conformance.RunElection(t, r.settings(t, conformance.SharedName(r.Prefix+"election_")))
		t.Log(rep)
		conformance.RequireSafe(t, rep.ProcessReport)
		if rep.Faults["kill-leader"] == 0 || rep.Leaders < 2 {
			t.Errorf("the nemesis killed %d leaders and %d workers led: want leaders killed and the lead moved", rep.Faults["kill-leader"], rep.Leaders)
		}
		if r.After != nil && !conformance.InWorker() {
			r.After(t)
		}
	})
}

// BenchElectionFailover measures how long an election of the driver
// registered as name, on dsn, goes without a leader, for terms of ttl:
//   - "killed": from the moment its leader's client stops reaching the
//     backend (every read and write of its connections waits 3 TTLs, as a
//     process that died or hung: no extension, no resignation) to the
//     return of a waiting candidate's Campaign. It is bound by the TTL:
//     the rest of the dead term, and then the candidate's next try;
//   - "resigned": from the leader's Resign to the return of a waiting
//     candidate's Campaign, bound by the wake-up at a release where the
//     driver announces releases, and by the retry strategy's pace where
//     it does not.
//
// It reports the median of each, in ms, over b.N failovers of each kind.
// It is a measurement, for benchstat and notes; run it with -benchtime Nx.
func BenchElectionFailover(b *testing.B, name, dsn string, ttl time.Duration) {
	b.ReportAllocs()
	ctx := context.Background()
	open := func(dial driver.DialFunc) *lock.Client {
		c, err := lock.OpenDialer(name, dsn, dial)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	var d net.Dialer
	candidates := []*lock.Client{open(d.DialContext), open(d.DialContext)}
	campaign := func(c *lock.Client, election, value string) (*lock.Term, error) {
		e, err := c.Election(election, lock.WithTTL(ttl))
		if err != nil {
			return nil, err
		}
		return e.Campaign(ctx, value)
	}
	// waitFor starts a candidate's campaign and returns when it is waiting,
	// with a channel that gets its term and the time it was elected.
	type elected struct {
		t   *lock.Term
		at  time.Time
		err error
	}
	waitFor := func(c *lock.Client, election string) <-chan elected {
		ch := make(chan elected, 1)
		go func() {
			t, err := campaign(c, election, "candidate")
			ch <- elected{t, time.Now(), err}
		}()
		time.Sleep(ttl / 10) // in line, and listening for a release where the driver announces them
		return ch
	}
	killed, resigned := latency.New(16), latency.New(16)
	for b.Loop() {
		election := "bench-failover/" + RandomHex(4)
		var nd netfault.Dialer
		dead := open(nd.Dial)
		if _, err := campaign(dead, election, "leader"); err != nil {
			b.Fatal(err)
		}
		next := waitFor(candidates[0], election)
		nd.Slow(3 * ttl)
		nd.Reset() // its connections are dialed again, and stall
		start := time.Now()
		got := <-next
		if got.err != nil {
			b.Fatal(got.err)
		}
		killed.Add(got.at.Sub(start))
		next = waitFor(candidates[1], election)
		start = time.Now()
		if err := got.t.Resign(ctx); err != nil {
			b.Fatal(err)
		}
		got = <-next
		if got.err != nil {
			b.Fatal(got.err)
		}
		resigned.Add(got.at.Sub(start))
		if err := got.t.Resign(ctx); err != nil {
			b.Fatal(err)
		}
		nd.Slow(0)
	}
	b.ReportMetric(float64(killed.Percentile(0.5))/1e6, "killed-ms")
	b.ReportMetric(float64(resigned.Percentile(0.5))/1e6, "resigned-ms")
	b.ReportMetric(0, "ns/op")
}
