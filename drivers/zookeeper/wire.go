package zookeeper

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// stallConn is a connection to one member, as the ZooKeeper client dials
// it, watched for what the client does not offer:
//   - the session timeout the member negotiated, read from the first packet
//     it sends (the connect response: protocol version, then the timeout);
//   - stalls: a member that has requests to answer and sends nothing for
//     stallTimeout is hung (stopped, or cut off behind a dead link), and the
//     connection is closed, so that the client moves the session to the
//     next member at once instead of after two thirds of the session
//     timeout. The session survives the move; requests in flight fail with
//     zk.ErrConnectionClosed, and the driver tries them again;
//   - a data race of the client's on reconnection (see [stallConn.gate]).
//
// The client writes each request (and each ping) with one Write, and every
// request gets one response; watch events (xid -1) answer nothing.
type stallConn struct {
	net.Conn
	timeout time.Duration
	stats   *connStats

	mu          sync.Mutex
	outstanding int       // requests written and not yet answered
	progress    time.Time // the last write from idle, or packet received
	timer       *time.Timer
	closed      bool

	// The reconnection gate (see gate).
	writes     int           // packets written
	resumes    bool          // the connect request resumes a session
	watchesSet chan struct{} // closed once setWatches is written
	gateOpen   bool          // no more waiting on this connection
	hold       bool          // the Read being scanned must wait on the gate
	done       chan struct{} // closed by Close

	// The packet being read.
	hdr     [4]byte
	hdrN    int
	left    int // body bytes still to come
	head    [12]byte
	headN   int
	packets int
}

// connStats is what a session's connections learn and count.
type connStats struct {
	negotiated   atomic.Int64 // the session timeout, in ms, from the latest connect response
	stalls       atomic.Int64 // connections closed for a stall
	gateTimeouts atomic.Int64 // gates that opened on their timer (see stallConn.gate)
}

func newStallConn(c net.Conn, timeout time.Duration, stats *connStats) *stallConn {
	s := &stallConn{Conn: c, timeout: timeout, stats: stats,
		watchesSet: make(chan struct{}), done: make(chan struct{})}
	s.timer = time.AfterFunc(time.Hour, s.check)
	s.timer.Stop()
	return s
}

// opSetWatches is the opcode of the request by which a client that
// resumes its session sets its watches again.
const opSetWatches = 101

func (s *stallConn) Write(b []byte) (int, error) {
	s.mu.Lock()
	if s.outstanding == 0 {
		s.progress = time.Now()
		s.timer.Reset(s.timeout)
	}
	s.outstanding++
	switch {
	case s.writes == 0:
		// The connect request: length, protocol version, last zxid seen,
		// timeout, then the session id, 0 for a new session.
		s.resumes = len(b) < 28 || binary.BigEndian.Uint64(b[20:28]) != 0
	case len(b) >= 12 && int32(binary.BigEndian.Uint32(b[8:12])) == opSetWatches:
		// Length, xid, then the opcode.
		select {
		case <-s.watchesSet:
		default:
			close(s.watchesSet)
		}
	}
	s.writes++
	s.mu.Unlock()
	return s.Conn.Write(b)
}

func (s *stallConn) Read(b []byte) (int, error) {
	n, err := s.Conn.Read(b)
	if n > 0 {
		s.mu.Lock()
		s.scan(b[:n])
		hold := s.hold
		s.hold = false
		s.mu.Unlock()
		if hold {
			s.gate()
		}
	}
	return n, err
}

// gate keeps the client's receiving goroutine from taking in a response
// that moves its last zxid while the client may still be reading it.
//
// go-zookeeper v1.0.4 (and its master as of 2024-08) has a data race on
// reconnection: when a connection resumes a session, the client's
// connection goroutine reads Conn.lastZxid to set its watches again
// (sendSetWatches) while the receiving goroutine it has just started
// writes Conn.lastZxid for every response with a zxid, without a lock
// between them (go-zookeeper/zk pull request #35, open since 2020). Benign
// on amd64, but the race detector stops a -race program on it. The reading
// happens only if the client has watches to set again, and then it is
// followed by the setWatches request, which goes through Write. So the
// Read that completes the header of the first response with a zxid (xid >=
// 0, zxid > 0: the write's condition) waits until setWatches was written,
// which orders the read before the write. The driver keeps a watch set on
// every session it opens (see session.keepWatch), so a resumed session has
// watches to set, and the wait is short. If it has none (a window after a
// session expired, before the watch is set again), nothing reads the last
// zxid, and the wait ends after the stall timeout instead, once per
// connection. A new session needs no gate: its watches were dropped with
// the old one, and it resets only those set through this connection, after
// the write they follow.
func (s *stallConn) gate() {
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case <-s.watchesSet:
	case <-s.done:
	case <-t.C:
		s.stats.gateTimeouts.Add(1)
	}
}

func (s *stallConn) Close() error {
	s.mu.Lock()
	s.shut()
	s.mu.Unlock()
	return s.Conn.Close()
}

// shut marks the connection closed, and ends a gate's wait. s.mu must be
// held.
func (s *stallConn) shut() {
	if !s.closed {
		s.closed = true
		s.timer.Stop()
		close(s.done)
	}
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
			if s.headN == len(s.head) && s.packets > 0 && s.resumes && !s.gateOpen {
				// A response's header: xid, then zxid.
				xid := int32(binary.BigEndian.Uint32(s.head[:4]))
				zxid := int64(binary.BigEndian.Uint64(s.head[4:12]))
				if xid >= 0 && zxid > 0 {
					s.hold, s.gateOpen = true, true
				}
			}
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
			s.stats.negotiated.Store(int64(int32(binary.BigEndian.Uint32(s.head[4:8]))))
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
	s.shut()
	s.stats.stalls.Add(1)
	s.Conn.Close()
}
