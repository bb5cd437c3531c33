package zookeeper

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// stallConn is a connection to one member, as the ZooKeeper client dials
// it, watched for two things the client does not offer:
//   - the session timeout the member negotiated, read from the first packet
//     it sends (the connect response: protocol version, then the timeout);
//   - stalls: a member that has requests to answer and sends nothing for
//     stallTimeout is hung (stopped, or cut off behind a dead link), and the
//     connection is closed, so that the client moves the session to the
//     next member at once instead of after two thirds of the session
//     timeout. The session survives the move; requests in flight fail with
//     zk.ErrConnectionClosed, and the driver tries them again.
//
// The client writes each request (and each ping) with one Write, and every
// request gets one response; watch events (xid -1) answer nothing.
type stallConn struct {
	net.Conn
	timeout    time.Duration
	negotiated *atomic.Int64 // the session's, in ms
	stalls     *atomic.Int64

	mu          sync.Mutex
	outstanding int       // requests written and not yet answered
	progress    time.Time // the last write from idle, or packet received
	timer       *time.Timer
	closed      bool

	// The packet being read.
	hdr     [4]byte
	hdrN    int
	left    int // body bytes still to come
	head    [8]byte
	headN   int
	packets int
}

func newStallConn(c net.Conn, timeout time.Duration, negotiated, stalls *atomic.Int64) *stallConn {
	s := &stallConn{Conn: c, timeout: timeout, negotiated: negotiated, stalls: stalls}
	s.timer = time.AfterFunc(time.Hour, s.check)
	s.timer.Stop()
	return s
}

func (s *stallConn) Write(b []byte) (int, error) {
	s.mu.Lock()
	if s.outstanding == 0 {
		s.progress = time.Now()
		s.timer.Reset(s.timeout)
	}
	s.outstanding++
	s.mu.Unlock()
	return s.Conn.Write(b)
}

func (s *stallConn) Read(b []byte) (int, error) {
	n, err := s.Conn.Read(b)
	if n > 0 {
		s.mu.Lock()
		s.scan(b[:n])
		s.mu.Unlock()
	}
	return n, err
}

func (s *stallConn) Close() error {
	s.mu.Lock()
	s.closed = true
	s.timer.Stop()
	s.mu.Unlock()
	return s.Conn.Close()
}

// scan follows the packets in b, read from the member. s.mu must be held.
func (s *stallConn) scan(b []byte) {
	for len(b) > 0 {
		if s.hdrN < 4 {
			k := copy(s.hdr[s.hdrN:], b)
			s.hdrN += k
			b = b[k:]
			if s.hdrN == 4 {
				s.left = int(binary.BigEndian.Uint32(s.hdr[:]))
				s.headN = 0
				if s.left == 0 {
					s.packetDone()
				}
			}
			continue
		}
		k := min(len(b), s.left)
		if s.headN < len(s.head) {
			s.headN += copy(s.head[s.headN:], b[:k])
		}
		s.left -= k
		b = b[k:]
		if s.left == 0 {
			s.packetDone()
		}
	}
}

// packetDone accounts for a packet received in full. s.mu must be held.
func (s *stallConn) packetDone() {
	first := s.packets == 0
	s.packets++
	s.hdrN = 0
	switch {
	case first:
		// The connect response: protocol version, timeout, session id...
		if s.headN >= 8 {
			s.negotiated.Store(int64(int32(binary.BigEndian.Uint32(s.head[4:8]))))
		}
		s.answered()
	case s.headN >= 4 && int32(binary.BigEndian.Uint32(s.head[:4])) == -1:
		// A watch event: no answer to anything, but a sign of life.
		s.progress = time.Now()
	default:
		s.answered()
	}
}

// answered accounts for a response. s.mu must be held.
func (s *stallConn) answered() {
	s.progress = time.Now()
	if s.outstanding > 0 {
		s.outstanding--
	}
	if s.outstanding == 0 {
		s.timer.Stop()
	} else {
		s.timer.Reset(s.timeout)
	}
}

// check runs when the stall timer fires.
func (s *stallConn) check() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.outstanding == 0 {
		return
	}
	if wait := s.timeout - time.Since(s.progress); wait > 0 {
		s.timer.Reset(wait)
		return
	}
	s.closed = true
	s.stalls.Add(1)
	s.Conn.Close()
}
