package bench

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/distlock/lock/internal/latency"
	"github.com/distlock/lock/internal/resp"
)

// floorReleaseScript deletes KEYS[1] if it holds ARGV[1], and announces the
// release on channel ARGV[2] unless it is empty. It is the text of the
// Redlock driver's release script (drivers/redlock/scripts.go), so that the
// servers run the same Lua for the floor as for our release. The floor
// passes an empty channel: a compare-and-delete with no announcement.
const floorReleaseScript = `
if redis.call('get', KEYS[1]) == ARGV[1] then
	redis.call('del', KEYS[1])
	if ARGV[2] ~= '' then
		redis.call('publish', ARGV[2], ARGV[1])
	end
	return 1
end
return 0
`

// A floorRelease is how the floor gives a key back.
type floorRelease int

const (
	// releaseEvalSHA is a compare-and-delete: EVALSHA of
	// floorReleaseScript, as a lock must release.
	releaseEvalSHA floorRelease = iota
	// releaseDEL is a plain DEL, which deletes whoever holds the key. It
	// is the floor of the figures before 2026-12-07, kept to compare them.
	releaseDEL
)

// BenchmarkFloor is what an acquire+release costs on this machine with no
// lock library at all: a SET NX PX of a random value written to each of N
// servers at once, a wait for a quorum's grants, then the release the
// same way, over raw connections, with one reader goroutine per server (as
// any client that asks nodes in parallel needs). lib=floor releases as a
// lock must, with a compare-and-delete script (EVALSHA, loaded before the
// timer starts); lib=floor-del releases with a DEL, as the floor did before;
// lib=floor-workers asks each server through a goroutine of its own, as
// ours does (see newFloorClient). cpu-µs/op is the process's CPU time per
// acquire+release, the servers' not included.
// Neither allocates in its loop. It is the floor under every Redlock
// implementation's p50 at N=1 and N=5, and their ratio is the least
// N=5/N=1 ratio a Redlock client can reach here: on two cores the five
// servers and the client take turns, so the fan-out costs more than a
// round trip.
func BenchmarkFloor(b *testing.B) {
	addrs := servers(b)
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("lib=floor/client=raw/N=%d", n), func(b *testing.B) {
			benchFloor(b, addrs[:n], releaseEvalSHA, false)
		})
	}
	b.Run("lib=floor-workers/client=raw/N=5", func(b *testing.B) {
		benchFloor(b, addrs[:5], releaseEvalSHA, true)
	})
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("lib=floor-del/client=raw/N=%d", n), func(b *testing.B) {
			benchFloor(b, addrs[:n], releaseDEL, false)
		})
	}
}

// A floorReply is a reader's verdict on one reply line: the seq-th reply
// of its connection, a grant (+OK, :1) or not, or the connection's error.
type floorReply struct {
	seq     int
	granted bool
	err     error
}

// floorClient is the floor's raw connections to N servers, for one
// goroutine's use at a time. Each connection has a goroutine that hands
// its replies over on replies: a reader, to which the caller writes every
// request itself (the floor), or, with workers, a worker that is handed
// each request through its channel, writes it and reads the reply (the
// shape of our fan-out, see BenchmarkFloorPaired).
type floorClient struct {
	release floorRelease
	conns   []net.Conn
	in      []chan []byte // with workers, a worker's requests; closed by close
	replies chan floorReply
	readers int // goroutines still running: each ends with an error on replies
	quorum  int
	seq     int    // the next request's place on every connection
	shaHex  string // the release script's
	value   string
	key     string // of set and give
	set     []byte // SET key value NX PX 10000
	give    []byte // the release of key
}

// newFloorClient dials the servers at addrs, loading the release script
// if release needs it, with a reader for each, or a worker with workers.
// Close closes it.
func newFloorClient(b *testing.B, addrs []string, release floorRelease, workers bool) *floorClient {
	sha := sha1.Sum([]byte(floorReleaseScript))
	f := &floorClient{
		release: release,
		replies: make(chan floorReply, 4*len(addrs)),
		conns:   make([]net.Conn, len(addrs)),
		quorum:  len(addrs)/2 + 1,
		shaHex:  hex.EncodeToString(sha[:]),
		value:   floorValue(),
	}
	for i, a := range addrs {
		c, err := net.Dial("tcp", a)
		if err != nil {
			f.close()
			b.Fatal(err)
		}
		f.conns[i] = c
		r := bufio.NewReader(c)
		if release == releaseEvalSHA {
			loadScript(b, c, r, f.shaHex)
		}
		f.readers++
		if !workers {
			go func() {
				for seq := 0; ; seq++ {
					if !f.readReply(a, r, seq) {
						return
					}
				}
			}()
			continue
		}
		in := make(chan []byte, 4)
		f.in = append(f.in, in)
		go func() {
			for seq := 0; ; seq++ {
				req, ok := <-in
				if !ok {
					f.replies <- floorReply{seq: seq, err: net.ErrClosed}
					return
				}
				if _, err := c.Write(req); err != nil {
					f.replies <- floorReply{seq: seq, err: err}
					return
				}
				if !f.readReply(a, r, seq) {
					return
				}
			}
		}()
	}
	return f
}

// readReply reads the seq-th reply of the server at addr from r and hands
// it over, and reports whether the connection may go on. Each request is
// answered by one line (+OK or $-1 to the SET, :1 or :0 to the script and
// the DEL): its goroutine counts them to tell which request a line
// answers.
func (f *floorClient) readReply(addr string, r *bufio.Reader, seq int) bool {
	line, err := r.ReadSlice('\n')
	switch {
	case err != nil:
	case line[0] == '-':
		err = fmt.Errorf("%s: %s", addr, line)
	default:
		f.replies <- floorReply{seq: seq, granted: line[0] == '+' || string(line) == ":1\r\n"}
		return true
	}
	f.replies <- floorReply{seq: seq, err: err}
	return false
}

// close ends the workers, if any, closes the connections, and reads
// replies until every reader and worker has ended: a server that lags
// behind the quorum may still have replies to hand over.
func (f *floorClient) close() {
	for _, in := range f.in {
		close(in)
	}
	for _, c := range f.conns {
		if c != nil {
			c.Close()
		}
	}
	for f.readers > 0 {
		if r := <-f.replies; r.err != nil {
			f.readers--
		}
	}
}

// requests makes set and give the requests for key. Only a new key
// allocates.
func (f *floorClient) requests(key string) {
	if key == f.key {
		return
	}
	f.key = key
	f.set = []byte(fmt.Sprintf("*6\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n",
		len(key), key, len(f.value), f.value))
	switch f.release {
	case releaseEvalSHA:
		f.give = []byte(fmt.Sprintf("*6\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$1\r\n1\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$0\r\n\r\n",
			f.shaHex, len(key), key, len(f.value), f.value))
	case releaseDEL:
		f.give = []byte(fmt.Sprintf("*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", len(key), key))
	}
}

// op takes key and gives it back: a SET NX PX of a random value written
// to each server at once, a wait for a quorum's grants, then the release
// the same way.
func (f *floorClient) op(key string) error {
	f.requests(key)
	if err := f.phase(f.set); err != nil {
		return err
	}
	return f.phase(f.give)
}

// phase writes req to every server (through the workers, if any) and
// waits for a quorum of grants of it; replies to earlier requests that
// come late are passed over. Each connection answers in order, so every
// server grants every request, and a refusal is a broken benchmark.
func (f *floorClient) phase(req []byte) error {
	// The request's place, taken before anything can fail: after a
	// refusal, the replies still out to req are passed over by the next
	// phase, not taken for its own.
	seq := f.seq
	f.seq++
	if f.in != nil {
		for _, in := range f.in {
			in <- req
		}
	} else {
		for _, c := range f.conns {
			if _, err := c.Write(req); err != nil {
				return err
			}
		}
	}
	for got := 0; got < f.quorum; {
		r := <-f.replies
		if r.err != nil {
			f.readers--
			return r.err
		}
		if r.seq != seq {
			continue
		}
		if !r.granted {
			return fmt.Errorf("floor: request %d refused: %q", seq, req)
		}
		got++
	}
	return nil
}

// newBareQuorumFloor is the floor of a quorum-first acquire+release
// (quorum_first=true): it asks three of the five servers at addrs, the
// same three every time (as a quorum-first round asks a key's first three
// in rendezvous order), and waits for all three, since only all three
// make a quorum of five. With workers, each server is asked through a
// goroutine of its own.
func newBareQuorumFloor(b *testing.B, addrs []string, workers bool) *floorClient {
	f := newFloorClient(b, addrs[:len(addrs)/2+1], releaseEvalSHA, workers)
	f.quorum = len(f.conns)
	return f
}

// benchFloor measures the floor on the servers at addrs, giving the key
// back as release says, with a worker per server if workers is set.
func benchFloor(b *testing.B, addrs []string, release floorRelease, workers bool) {
	f := newFloorClient(b, addrs, release, workers)
	defer f.close()
	key := benchKey(b, "")
	f.requests(key)
	lat := latency.New(1 << 20)
	cpu0 := latency.CPUTime()
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := f.op(key); err != nil {
			b.Fatal(err)
		}
		lat.Add(time.Since(start))
	}
	latency.ReportCPU(b, cpu0)
	latency.Report(b, "", "µs", lat)
}

// floorValue returns a random value of the length our locks' values have
// (20 random bytes in unpadded URL-safe base64). The floor takes one for
// all its acquisitions, so that its loop allocates nothing.
func floorValue() string {
	var v [20]byte
	rand.Read(v[:])
	return base64.RawURLEncoding.EncodeToString(v[:])
}

// loadScript loads floorReleaseScript on the server of c with SCRIPT LOAD,
// reading the reply from r, and checks that the server knows it by sha.
func loadScript(b *testing.B, c net.Conn, r *bufio.Reader, sha string) {
	b.Helper()
	if _, err := c.Write(resp.AppendCommand(nil, "SCRIPT", "LOAD", floorReleaseScript)); err != nil {
		b.Fatal(err)
	}
	reply, err := resp.ReadReply(r)
	if err != nil {
		b.Fatal(err)
	}
	if reply != sha {
		b.Fatalf("SCRIPT LOAD replied %q, want %s", reply, sha)
	}
}
