package zookeeper

import (
	"encoding/binary"
	"errors"
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

// heldBack fails t if read, a pending Read, returns within 50ms: why
// says what it would mean.
func heldBack(t *testing.T, read <-chan error, why string) {
	t.Helper()
	select {
	case err := <-read:
		t.Fatalf("%s (err %v)", why, err)
	case <-time.After(50 * time.Millisecond):
	}
}

// delivered fails t unless read, a pending Read, returns without an error
// within 5s: why says what a timeout would mean.
func delivered(t *testing.T, read <-chan error, why string) {
	t.Helper()
	select {
	case err := <-read:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal(why)
	}
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

func newScripted(watched bool) (*stallConn, *scriptConn, *connStats) {
	stats := &connStats{}
	stats.watched.Store(watched)
	sc := &scriptConn{in: make(chan []byte, 8)}
	return newStallConn(sc, time.Minute, stats), sc, stats
}

// On a connection that resumes a session with watches, the first response
// with a zxid reaches the client only after the setWatches request was
// written; responses without one pass at once.
func TestStallConn_gateHoldsZxidUntilSetWatches(t *testing.T) {
	s, sc, _ := newScripted(true)
	handshake(t, s, sc, 42)
	sc.in <- response(-2, 0) // a ping's answer
	if err := <-readAsync(s); err != nil {
		t.Fatal(err)
	}
	s.Write(request(1, opGetData, "/a", false))
	sc.in <- response(1, 100)
	read := readAsync(s)
	heldBack(t, read, "a response with a zxid was delivered before setWatches was written")
	s.Write(request(2, opSetWatches, "", false))
	delivered(t, read, "the response was still held 5s after setWatches was written")
}

// A connection closed while a response waits at the gate does not deliver
// it.
func TestStallConn_gateClosedDeliversNothing(t *testing.T) {
	s, sc, _ := newScripted(true)
	handshake(t, s, sc, 42)
	sc.in <- response(1, 100)
	read := readAsync(s)
	time.Sleep(10 * time.Millisecond)
	s.Close()
	if err := <-read; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close at the gate: %v, want net.ErrClosed", err)
	}
}

// On a connection that starts a session, responses pass as they are
// until a watch's answer has; after it, they pass with their zxid zeroed,
// until the client writes a setWatches (it read its last zxid by then).
// Nothing is held.
func TestStallConn_newSessionZeroesZxidAfterFirstWatch(t *testing.T) {
	s, sc, stats := newScripted(false)
	handshake(t, s, sc, 0)
	zxidOf := func(r []byte) int64 {
		t.Helper()
		buf := make([]byte, 512)
		sc.in <- r
		done := make(chan int64, 1)
		go func() {
			n, err := s.Read(buf)
			if err != nil || n != len(r) {
				t.Errorf("Read = %d, %v; want %d bytes", n, err, len(r))
			}
			done <- int64(binary.BigEndian.Uint64(buf[8:16]))
		}()
		select {
		case z := <-done:
			return z
		case <-time.After(5 * time.Second):
			t.Fatal("a response was held")
			return 0
		}
	}
	s.Write(request(1, opGetData, "/a", false))
	s.Write(request(2, opExists, "/k", true))
	s.Write(request(3, opGetData, "/b", false))
	s.Write(request(4, opGetData, "/c", false))
	if z := zxidOf(response(1, 5)); z != 5 {
		t.Errorf("before any watch: zxid %d, want 5", z)
	}
	if z := zxidOf(response(2, 6)); z != 6 {
		t.Errorf("the watch's answer: zxid %d, want 6", z)
	}
	if !stats.watched.Load() {
		t.Fatal("a watch's answer was delivered, and the session is not known to have a watch")
	}
	if z := zxidOf(response(3, 7)); z != 0 {
		t.Errorf("after the watch's answer: zxid %d, want 0", z)
	}
	if z := zxidOf(packet(int32(-1), int64(8), int32(0), int32(2), int32(3), "/k")); z != 8 {
		t.Errorf("a watch event: zxid %d, want it untouched (8)", z)
	}
	s.Write(request(5, opSetWatches, "", false))
	if z := zxidOf(response(4, 9)); z != 9 {
		t.Errorf("after setWatches: zxid %d, want 9", z)
	}
	if got := stats.rewritten.Load(); got != 1 {
		t.Errorf("%d responses rewritten, want 1", got)
	}
}

// A connection that resumes a session and ends before writing its
// setWatches leaves it queued: it goes out first on the next connection,
// made before that connection's own, and does not open its gate.
func TestStallConn_earlierSetWatchesDoNotOpenTheGate(t *testing.T) {
	first, sc1, stats := newScripted(true)
	handshake(t, first, sc1, 42)
	first.Close() // before its setWatches was written

	sc2 := &scriptConn{in: make(chan []byte, 8)}
	s := newStallConn(sc2, time.Minute, stats)
	handshake(t, s, sc2, 42)
	s.Write(request(1, opSetWatches, "", false)) // the first connection's
	s.Write(request(2, opGetData, "/a", false))
	sc2.in <- response(2, 100)
	read := readAsync(s)
	heldBack(t, read, "the earlier connection's setWatches opened the gate")
	s.Write(request(3, opSetWatches, "", false)) // this connection's
	delivered(t, read, "the response was still held 5s after this connection's setWatches was written")
}
