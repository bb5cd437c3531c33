package bench

import (
	"bufio"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/distlock/lock/internal/latency"
)

// BenchmarkFloor is what an acquire+release costs on this machine with no
// lock library at all: a SET NX PX written to each of N servers at once,
// a wait for a quorum's replies, then a DEL the same way, over raw
// connections, one reader goroutine per server (as any client that asks
// nodes in parallel needs), no scripts, no value checks, no allocations
// beyond the channel's. It is the floor under every Redlock
// implementation's p50 at N=1 and N=5, and their ratio is the least
// N=5/N=1 ratio a Redlock client can reach here: on two cores the five
// servers and the client take turns, so the fan-out costs more than a
// round trip.
func BenchmarkFloor(b *testing.B) {
	addrs := servers(b)
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("lib=floor/client=raw/N=%d", n), func(b *testing.B) {
			benchFloor(b, addrs[:n])
		})
	}
}

func benchFloor(b *testing.B, addrs []string) {
	type reply struct {
		seq int
		err error
	}
	replies := make(chan reply, 4*len(addrs))
	conns := make([]net.Conn, len(addrs))
	for i, a := range addrs {
		c, err := net.Dial("tcp", a)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		// Each request is answered by one line (+OK, $-1, :1): the
		// reader counts them to tell which request a line answers.
		go func() {
			r := bufio.NewReader(c)
			for seq := 0; ; seq++ {
				line, err := r.ReadSlice('\n')
				if err != nil {
					replies <- reply{seq, err}
					return
				}
				if line[0] == '-' {
					replies <- reply{seq, fmt.Errorf("%s: %s", a, line)}
					return
				}
				replies <- reply{seq, nil}
			}
		}()
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	key := benchKey(b, "")
	set := []byte(fmt.Sprintf("*6\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$5\r\nvalue\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n", len(key), key))
	del := []byte(fmt.Sprintf("*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", len(key), key))
	quorum := len(addrs)/2 + 1
	seq := 0
	// phase writes req to every server and waits for a quorum of replies
	// to it; replies to earlier requests that come late are passed over.
	phase := func(req []byte) {
		for _, c := range conns {
			if _, err := c.Write(req); err != nil {
				b.Fatal(err)
			}
		}
		for got := 0; got < quorum; {
			r := <-replies
			if r.err != nil {
				b.Fatal(r.err)
			}
			if r.seq == seq {
				got++
			}
		}
		seq++
	}
	lat := latency.New(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		phase(set)
		phase(del)
		lat.Add(time.Since(start))
	}
	latency.Report(b, "", "µs", lat)
}
