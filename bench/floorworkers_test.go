package bench

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net"
	"testing"
)

// floorWorkers is the floor in the shape of a client that asks each
// server on a goroutine of its own, as ours does (drivers/redlock's
// workers): a worker per server is handed each request through a
// channel, writes it, reads the reply and hands it back. It keeps the
// floor's requests and quorum (its floorClient has no connections).
type floorWorkers struct {
	*floorClient
	in  []chan []byte // a worker's requests; closed by close
	out chan floorReply
}

// newFloorWorkers dials the servers at addrs and starts their workers.
func newFloorWorkers(b *testing.B, addrs []string) *floorWorkers {
	sha := sha1.Sum([]byte(floorReleaseScript))
	f := &floorWorkers{
		floorClient: &floorClient{
			release: releaseEvalSHA,
			quorum:  len(addrs)/2 + 1,
			shaHex:  hex.EncodeToString(sha[:]),
			value:   floorValue(),
		},
		out: make(chan floorReply, 4*len(addrs)),
	}
	for _, a := range addrs {
		c, err := net.Dial("tcp", a)
		if err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReader(c)
		loadScript(b, c, r, f.shaHex)
		in := make(chan []byte, 4)
		f.in = append(f.in, in)
		go func() {
			defer c.Close()
			for seq := 0; ; seq++ {
				req, ok := <-in
				if !ok {
					return
				}
				if _, err := c.Write(req); err != nil {
					f.out <- floorReply{seq: seq, err: err}
					return
				}
				line, err := r.ReadSlice('\n')
				if err != nil {
					f.out <- floorReply{seq: seq, err: err}
					return
				}
				f.out <- floorReply{seq: seq, granted: line[0] == '+' || string(line) == ":1\r\n"}
			}
		}()
	}
	return f
}

// close makes the workers close their connections and end.
func (f *floorWorkers) close() {
	for _, in := range f.in {
		close(in)
	}
}

// op is floorClient.op through the workers.
func (f *floorWorkers) op(key string) error {
	f.requests(key)
	if err := f.phase(f.set); err != nil {
		return err
	}
	return f.phase(f.give)
}

// phase is floorClient.phase through the workers.
func (f *floorWorkers) phase(req []byte) error {
	for _, in := range f.in {
		in <- req
	}
	for got := 0; got < f.quorum; {
		r := <-f.out
		if r.err != nil {
			return r.err
		}
		if r.seq != f.seq {
			continue
		}
		if !r.granted {
			return fmt.Errorf("floor-workers: request %d refused: %q", f.seq, req)
		}
		got++
	}
	f.seq++
	return nil
}
