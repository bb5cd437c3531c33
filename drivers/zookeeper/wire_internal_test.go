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
	s.Write(connectRequest(42))
	sc.in <- connectResponse()
	if err := <-readAsync(s); err != nil {
		t.Fatal(err)
	}
	sc.in <- response(-2, 0) // a ping's answer
	if err := <-readAsync(s); err != nil {
		t.Fatal(err)
	}
	s.Write(request(1, opGetData, "/a", false))
	sc.in <- response(1, 100)
	read := readAsync(s)
	select {
	case err := <-read:
		t.Fatalf("a response with a zxid was delivered before setWatches was written (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	s.Write(request(2, opSetWatches, "", false))
	select {
	case err := <-read:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the response was still held 5s after setWatches was written")
	}
}

// A connection closed while a response waits at the gate does not deliver
// it.
func TestStallConn_gateClosedDeliversNothing(t *testing.T) {
	s, sc, _ := newScripted(true)
	s.Write(connectRequest(42))
	sc.in <- connectResponse()
	<-readAsync(s)
	sc.in <- response(1, 100)
	read := readAsync(s)
	time.Sleep(10 * time.Millisecond)
	s.Close()
	if err := <-read; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close at the gate: %v, want net.ErrClosed", err)
	}
}

// A connection that starts a session delivers responses up to the answer
// of its first request that sets a watch, and ends there; one that resumes
// a session without watches does the same.
func TestStallConn_newSessionEndsAfterFirstWatch(t *testing.T) {
	for _, sid := range []int64{0, 42} {
		s, sc, stats := newScripted(false)
		s.Write(connectRequest(sid))
		sc.in <- connectResponse()
		<-readAsync(s)
		s.Write(request(1, opExists, "/k", true))
		s.Write(request(2, opGetData, "/a", false))
		s.Write(request(3, opGetData, "/b", false))
		two, one, three := response(2, 5), response(1, 6), response(3, 7)
		sc.in <- append(append(append([]byte{}, two...), one...), three...)
		buf := make([]byte, 512)
		n, err := s.Read(buf)
		if err != nil || n != len(two)+len(one) {
			t.Fatalf("session %d: Read = %d, %v; want the %d bytes up to the watch's answer", sid, n, err, len(two)+len(one))
		}
		if n, err := s.Read(buf); n != 0 || !errors.Is(err, errWatchesSet) {
			t.Fatalf("session %d: the Read after the watch's answer = %d, %v; want 0, errWatchesSet", sid, n, err)
		}
		if !stats.watched.Load() || stats.cuts.Load() != 1 {
			t.Errorf("session %d: watched %v, cuts %d; want true, 1", sid, stats.watched.Load(), stats.cuts.Load())
		}
	}
}
