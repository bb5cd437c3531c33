package bench

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/distlock/lock/drivertest"
)

// pairedImpls are the implementations that BenchmarkFloorPaired runs
// beside the floor: ours over each client, at the defaults and with
// quorum_first.
var pairedImpls = []string{
	"ours-goredis", "ours-redigo", "ours-rueidis", "ours-valkey",
	"oursqf-goredis", "oursqf-redigo", "oursqf-rueidis", "oursqf-valkey",
}

// BenchmarkFloorPaired is issue 32's p50 line measured so that the
// machine's drift cannot bias it: the floor (lib=floor of BenchmarkFloor,
// which releases with the compare-and-delete script) and ours over each
// client take turns in 100ms windows (drivertest.BenchAlternating), one
// goroutine, uncontended, at N=5. Each reports its p50 ("p50-µs:NAME")
// and its ratio to the floor's in the same windows ("p50-ratio:NAME").
// BenchmarkFloor and BenchmarkAcquireRelease measure the same in runs
// seconds apart, and the machine's state moved the floor alone by a third
// between such runs.
//
// Two more contenders tell the method's error and the fan-out's shape:
// floor-again, a second floor, whose ratio should be 1; and floor-workers
// (newFloorClient with workers), the floor asking each server on a
// goroutine of its own, as ours does.
//
// DISTLOCK_PAIRED, a comma-separated list of names from impls, runs those
// instead of pairedImpls. It may also name floor-q3 and floor-q3-workers,
// the floor of a quorum-first acquire+release (newBareQuorumFloor: three
// servers asked, all three waited for) without and with a goroutine per
// server, which oursqf-* are to be set beside. Each takes its keys apart
// from the others', which a refusal would stop. It may name oursraw and
// oursraw-qf too: ours at the defaults and with quorum_first over rawNode
// (a connection per server, no client library), which tell the client's
// cost apart from the rounds'.
func BenchmarkFloorPaired(b *testing.B) {
	addrs := servers(b)[:5]
	f := newFloorClient(b, addrs, releaseEvalSHA, false)
	defer f.close()
	again := newFloorClient(b, addrs, releaseEvalSHA, false)
	defer again.close()
	w := newFloorClient(b, addrs, releaseEvalSHA, true)
	defer w.close()
	contenders := []drivertest.Contender{{Name: "floor", Op: f.op}, {Name: "floor-again", Op: again.op}, {Name: "floor-workers", Op: w.op}}
	impls := pairedImpls
	if v := os.Getenv("DISTLOCK_PAIRED"); v != "" {
		impls = strings.Split(v, ",")
	}
	for _, name := range impls {
		if name == "floor-q3" || name == "floor-q3-workers" {
			q := newBareQuorumFloor(b, addrs, name == "floor-q3-workers")
			defer q.close()
			var key, own string // the last key, and q's own for it
			contenders = append(contenders, drivertest.Contender{Name: name, Op: func(k string) error {
				if k != key {
					key, own = k, k+"/"+name
				}
				return q.op(own)
			}})
			continue
		}
		var im impl
		switch name {
		case "oursraw", "oursraw-qf":
			im = newRawOurs(b, addrs, name == "oursraw-qf")
		default:
			im = newImpl(b, name, addrs)
		}
		defer im.close()
		contenders = append(contenders, drivertest.Contender{Name: name, Op: opOf(im)})
	}
	drivertest.BenchAlternating(b, 1, contenders...)
}

// opOf returns an acquisition and release of a key through im, with a
// mutex per key, made on the key's first operation.
func opOf(im impl) func(key string) error {
	mus := make(map[string]mutex)
	ctx := context.Background()
	return func(key string) error {
		m, ok := mus[key]
		if !ok {
			m = im.mutex(key)
			mus[key] = m
		}
		if err := m.tryLock(ctx); err != nil {
			return err
		}
		return m.unlock(ctx)
	}
}
