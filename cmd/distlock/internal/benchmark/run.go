// Package benchmark measures lock drivers side by side for 'distlock
// bench': uncontended latency, throughput on distinct keys, handoffs of
// one key with a shared client and with a client per goroutine, and, for
// Redlock, latency with 2 of 5 nodes hung on redis-server processes of
// its own. With a [FaultPlan], it also runs a steady load through one
// fault per networked driver, on the servers that a folder's
// [FaultsFolder] hands it ([ReadServerFile]). It reports a [Report] as an
// aligned table ([WriteTable]), JSON ([WriteJSON]) and a self-contained
// SVG chart ([WriteSVG]).
package benchmark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/distlock/lock"
)

// The shapes of the measurements.
const (
	KeysGoroutines     = 16 // goroutines of the distinct-keys throughput
	HandoffGoroutines  = 8  // goroutines taking turns at one key
	HungNodeCount      = 5  // nodes of the hung measurement
	HungCount          = 2  // of which this many are hung
	probeTimeout       = 3 * time.Second
	probeRetryInterval = 100 * time.Millisecond
)

// Target is a driver to measure, and the DSN that reaches its backend.
type Target struct {
	Driver string
	DSN    string
	// Skip, when set, says why the target is not measured: it is reported
	// as skipped without being opened.
	Skip string
}

// Plan is what [Run] measures.
type Plan struct {
	Targets  []Target
	Duration time.Duration // of each measurement
	Hold     time.Duration // how long a holder keeps the key in the handoff measurements
	// RedisServer is the redis-server binary that the hung measurement
	// runs its nodes with, on ports HungBasePort to HungBasePort+4, or on
	// free ports the system picks when HungBasePort is 0. Empty, the
	// measurement is skipped, and HungSkip says why.
	RedisServer  string
	HungBasePort int
	HungSkip     string
	// Faults, when set, adds the faults section: a fault per networked
	// driver measured, after every speed measurement.
	Faults *FaultPlan
}

// IsRedlock reports whether the driver named driverName is a Redlock
// driver, measured with nodes hung too.
func IsRedlock(driverName string) bool { return driverName == "goredis" || driverName == "redigo" }

// Run measures plan's targets, reporting its progress to p. A target whose
// backend does not answer within 3s is skipped; a measurement that fails
// is reported in its driver's row, and the run goes on. When ctx ends, Run
// stops measuring and reports what it has, with Interrupted set. The nodes
// of the hung measurement are stopped before Run returns, whatever
// happens.
func Run(ctx context.Context, plan Plan, p *Progress) *Report {
	r := &Report{Machine: ThisMachine(time.Now()), Duration: plan.Duration.String(), Hold: plan.Hold.String()}
	p.Logf("connecting to %s", targetNames(plan.Targets))
	var ready []probed
	for _, pr := range probe(ctx, plan.Targets, p.Logger()) {
		if pr.err != nil {
			r.Skipped = append(r.Skipped, Skip{Driver: pr.Driver, Reason: pr.err.Error()})
			continue
		}
		defer pr.client.Close()
		ready = append(ready, pr)
	}
	nodes, note, skipped := startHung(ctx, plan, ready)
	if nodes != nil {
		defer func() {
			if err := nodes.Stop(); err != nil {
				p.Logf("stopping bench's redis-server nodes: %v", err)
			}
		}()
	}
	r.HungNodes, r.HungSkipped = note, skipped
	p.Begin(stepCount(ready, nodes != nil, plan.Faults != nil))
	keys := NewKeys()
	for _, pr := range ready {
		r.Rows = append(r.Rows, measureDriver(ctx, pr, plan, keys, nodes, skipped, p))
	}
	if plan.Faults != nil {
		r.Paused = runPaused(ctx, ready, keys, p)
		r.FaultsBefore, r.FaultsLimit = plan.Faults.before().String(), plan.Faults.limit().String()
		r.Faults = runFaults(ctx, ready, *plan.Faults, keys, p)
	}
	r.Interrupted = ctx.Err() != nil
	p.Finish()
	return r
}

func targetNames(ts []Target) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Driver
	}
	return strings.Join(names, ", ")
}

// stepCount returns the number of measurements of ready's drivers.
func stepCount(ready []probed, hung, faults bool) int {
	n := 0
	if faults {
		n++ // the paused holders, all at once
	}
	for _, pr := range ready {
		n += 4
		if hung && IsRedlock(pr.Driver) {
			n++
		}
		if faults && Networked(pr.Driver) {
			n++
		}
	}
	return n
}

// Networked reports whether driverName's backend is a server, which the
// faults section measures through a fault: every driver but memory.
func Networked(driverName string) bool { return driverName != "memory" }

// runFaults measures the faults section of each networked driver of
// ready. Drivers whose DSNs name none of the same servers (as
// --servers-dir lists them) run at once, each group on servers of its own;
// drivers that share servers (the Redlock clients on the same masters) run
// one after another. A group's load and fault then touch no other group's
// servers, and the section takes about as long as its longest group, not
// the sum of them all.
func runFaults(ctx context.Context, ready []probed, fp FaultPlan, keys *Keys, p *Progress) []FaultResult {
	var networked []probed
	for _, pr := range ready {
		if Networked(pr.Driver) {
			networked = append(networked, pr)
		}
	}
	out := make([]FaultResult, len(networked))
	var wg sync.WaitGroup
	for _, group := range faultGroups(networked, fp.ServersDir) {
		wg.Go(func() {
			for _, i := range group {
				out[i] = faultOf(ctx, networked[i], fp, keys, p)
			}
		})
	}
	wg.Wait()
	return out
}

// faultOf measures the faults section of pr's driver.
func faultOf(ctx context.Context, pr probed, fp FaultPlan, keys *Keys, p *Progress) FaultResult {
	if ctx.Err() != nil {
		return FaultResult{Driver: pr.Driver, Note: "interrupted", Restored: true}
	}
	p.Step(pr.Driver+": fault", fp.before()+2*recoveryWindow)
	fr := measureFault(ctx, pr.Target, fp, keys, p.Logger())
	switch {
	case fr.Error != "":
		p.Logf("%s: fault: %s", pr.Driver, abridge(fr.Error))
	case fr.Note != "":
		p.Logf("%s: %s", pr.Driver, fr.Note)
	}
	return fr
}

// faultGroups returns the indexes of prs in groups: two drivers whose
// DSNs name a server of dir in common are in one group, in their order.
// A driver with no servers there is a group of its own.
func faultGroups(prs []probed, dir string) [][]int {
	group := make([]int, len(prs)) // each driver's group, by its first member
	for i := range group {
		group[i] = i
	}
	first := make(map[string]int) // a server's address: the first driver that names it
	for i, pr := range prs {
		sf, err := ReadServerFile(dir, pr.Driver)
		if err != nil {
			continue
		}
		for _, s := range sf.Reached(pr.DSN) {
			j, seen := first[s.Addr]
			if !seen {
				first[s.Addr] = i
				continue
			}
			// Join j's group: every driver of i's group moves to it.
			from, to := group[i], group[j]
			for k := range group {
				if group[k] == from {
					group[k] = to
				}
			}
		}
	}
	var out [][]int
	at := make(map[int]int) // a group's index in out
	for i, g := range group {
		k, ok := at[g]
		if !ok {
			k = len(out)
			at[g] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// probed is a target, with its client or the reason it has none.
type probed struct {
	Target
	client *lock.Client
	err    error
}

// probe opens a client of each target's, all at once, logging to log.
func probe(ctx context.Context, targets []Target, log *slog.Logger) []probed {
	out := make([]probed, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		if t.Skip != "" {
			out[i] = probed{Target: t, err: errors.New(t.Skip)}
			continue
		}
		wg.Go(func() {
			c, err := open(ctx, t.Driver, t.DSN, log)
			out[i] = probed{Target: t, client: c, err: err}
		})
	}
	wg.Wait()
	return out
}

// open opens a client that logs to log, and pings it until it answers,
// for up to 3s, or until a connection is refused: then nothing listens,
// and waiting would not help.
func open(ctx context.Context, driverName, dsn string, log *slog.Logger) (*lock.Client, error) {
	c, err := lock.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	c.SetLogger(log)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for {
		err = c.Ping(ctx)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			c.Close()
			return nil, err
		}
		if sleep(ctx, probeRetryInterval); ctx.Err() != nil {
			break
		}
	}
	c.Close()
	return nil, fmt.Errorf("no answer within %v: %w", probeTimeout, err)
}

// startHung starts the nodes of the hung measurement when a Redlock driver
// is ready and plan allows it. It returns them and their description, or
// nil and why they were not started ("" if no driver needs them).
func startHung(ctx context.Context, plan Plan, ready []probed) (nodes *Nodes, note, skipped string) {
	need := false
	for _, pr := range ready {
		need = need || IsRedlock(pr.Driver)
	}
	switch {
	case !need:
		return nil, "", ""
	case plan.RedisServer == "":
		return nil, "", plan.HungSkip
	}
	nodes, err := StartNodes(ctx, plan.RedisServer, plan.HungBasePort, HungNodeCount)
	if err != nil {
		return nil, "", err.Error()
	}
	return nodes, fmt.Sprintf("%d redis-server processes of bench's own on %s, %d of them hung with SIGSTOP",
		HungNodeCount, addrList(nodes.Addrs()), HungCount), ""
}

// addrList writes addresses of one host (host:port) as the host and a port
// range when the ports follow each other ("127.0.0.1:7101-7105"), else as
// the host and every port ("127.0.0.1:40211,38977,...").
func addrList(addrs []string) string {
	if len(addrs) == 0 {
		return "no address"
	}
	var host string
	ports := make([]string, len(addrs))
	consecutive := len(addrs) > 1
	prev := 0
	for i, a := range addrs {
		host, ports[i], _ = net.SplitHostPort(a)
		p, _ := strconv.Atoi(ports[i])
		consecutive = consecutive && (i == 0 || p == prev+1)
		prev = p
	}
	if consecutive {
		return host + ":" + ports[0] + "-" + ports[len(ports)-1]
	}
	return host + ":" + strings.Join(ports, ",")
}
