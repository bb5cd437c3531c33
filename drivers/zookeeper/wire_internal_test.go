package zookeeper

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// scriptConn is a connection whose reads return the chunks sent on in,
// one per Read, and whose writes go nowhere.
type scriptConn struct {
	net.Conn // nil: only Read, Write and Close are used
	in       chan []byte
}

func (c *scriptConn) Read(b []byte) (int, error) {
	chunk, ok := <-c.in
	if !ok {
		return 0, net.ErrClosed
	}
	return copy(b, chunk), nil
}

func (c *scriptConn) Write(b []byte) (int, error) { return len(b), nil }
func (c *scriptConn) Close() error                { return nil }

// Packets as the client and the server frame them: a length, then the body.
func packet(fields ...any) []byte {
	var body []byte
	for _, f := range fields {
		switch v := f.(type) {
		case int32:
			body = binary.BigEndian.AppendUint32(body, uint32(v))
		case int64:
			body = binary.BigEndian.AppendUint64(body, uint64(v))
		case string:
			body = binary.BigEndian.AppendUint32(body, uint32(len(v)))
			body = append(body, v...)
		case bool:
			b := byte(0)
			if v {
				b = 1
			}
			body = append(body, b)
		}
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// connectRequest: protocol version, last zxid, timeout, session id, password.
func connectRequest(sid int64) []byte {
	return packet(int32(0), int64(0), int32(4000), sid, "0123456789abcdef")
}

// connectResponse: protocol version, timeout, session id, password.
func connectResponse() []byte { return packet(int32(0), int32(4000), int64(42), "0123456789abcdef") }

// request: xid, opcode, path, watch flag.
func request(xid, op int32, path string, watch bool) []byte {
	return packet(xid, op, path, watch)
}

// response: xid, zxid, error, and a body.
func response(xid int32, zxid int64) []byte { return packet(xid, zxid, int32(0), int64(7)) }

func readAsync(s *stallConn) <-chan error {
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 512)
		_, err := s.Read(buf)
		done <- err
	}()
	return done
}

// handshake writes a connect request for session sid (0: a new one) and
// delivers the member's answer.
func handshake(t *testing.T, s *stallConn, sc *scriptConn, sid int64) {
	t.Helper()
	s.Write(connectRequest(sid))
	sc.in <- connectResponse()
	if err := <-readAsync(s); err != nil {
		t.Fatal(err)
	}
}

func newScripted() (*stallConn, *scriptConn, *connStats) {
	stats := &connStats{}
	sc := &scriptConn{in: make(chan []byte, 8)}
	return newStallConn(sc, time.Minute, stats), sc, stats
}

// Every reply reaches the client with its header's zxid zeroed, at once,
// whether its bytes come in one read or many; watch events and pings pass
// untouched, and so does the body.
func TestStallConn_zeroesEveryReplysZxid(t *testing.T) {
	s, sc, stats := newScripted()
	handshake(t, s, sc, 42)
	read := func(chunks ...[]byte) []byte {
		t.Helper()
		var got []byte
		for _, c := range chunks {
			sc.in <- c
			buf := make([]byte, 512)
			done := make(chan int, 1)
			go func() {
				n, err := s.Read(buf)
				if err != nil {
					t.Error(err)
				}
				done <- n
			}()
			select {
			case n := <-done:
				got = append(got, buf[:n]...)
			case <-time.After(5 * time.Second):
				t.Fatal("a response was held")
			}
		}
		return got
	}
	zxid := func(p []byte) int64 { return int64(binary.BigEndian.Uint64(p[8:16])) }
	s.Write(request(1, 4, "/a", true))
	if z := zxid(read(response(1, 5))); z != 0 {
		t.Errorf("a reply: zxid %d, want 0", z)
	}
	r := response(2, 6)
	got := read(r[:6], r[6:11], r[11:])
	if z := zxid(got); z != 0 {
		t.Errorf("a reply read in three pieces: zxid %d, want 0", z)
	}
	if b := int64(binary.BigEndian.Uint64(got[20:28])); b != 7 {
		t.Errorf("a reply's body: %d, want it untouched (7)", b)
	}
	if z := zxid(read(packet(int32(-1), int64(8), int32(0), int32(2), int32(3), "/k"))); z != 8 {
		t.Errorf("a watch event: zxid %d, want it untouched (8)", z)
	}
	if z := zxid(read(response(-2, 9))); z != 9 {
		t.Errorf("a ping's answer: zxid %d, want it untouched (9)", z)
	}
	if n := stats.rewritten.Load(); n != 2 {
		t.Errorf("%d responses rewritten, want 2", n)
	}
}
