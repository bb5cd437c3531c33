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
//   - a data race of the client's own (see [stallConn.Read]).
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

	// The packet being read.
	hdr     [4]byte
	hdrN    int
	left    int // body bytes still to come
	head    [16]byte
	headN   int
	packets int
}

// connStats is what a session's connections learn and count.
type connStats struct {
	negotiated atomic.Int64 // the session timeout, in ms, from the latest connect response
	stalls     atomic.Int64 // connections closed for a stall
	rewritten  atomic.Int64 // responses whose zxid was zeroed
}

func newStallConn(c net.Conn, timeout time.Duration, stats *connStats) *stallConn {
	s := &stallConn{Conn: c, timeout: timeout, stats: stats}
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

// Read reads from the member, and keeps the client from racing with itself.
//
// go-zookeeper v1.0.4 (and its master as of 2024-08) has a data race: each
// time a connection is established, the client's connection goroutine
// reads Conn.lastZxid to set its watches again (sendSetWatches), while the
// receiving goroutine it has just started writes Conn.lastZxid for every
// response that carries a zxid (xid >= 0, zxid > 0), without a lock
// between them (go-zookeeper/zk pull request #35, open since 2020). It is
// harmless on amd64, but the race detector stops a -race program on it.
//
// So the zxid in the header of every response is zeroed before the client
// sees it: the client never writes its last zxid, and there is nothing to
// race with. The header's zxid is the member's latest, not the node's (a
// Stat's zxids, the driver's tokens among them, are in the body and pass
// untouched). The client sends its last zxid, 0, in two places:
//   - in its connect requests, where a member refuses a client that has
//     seen more than it has: a session may resume on a member that is
//     behind, and the driver syncs before it reads (see DESIGN.md);
//   - in setWatches, where the member fires every watch whose node changed
//     since that zxid: after a reconnection, the watches on nodes that
//     exist fire once, and the watch loop looks again and sets them anew.
//
// Watch events (xid -1) and pings pass as they are; the client writes no
// zxid for them. Connections given to [New] are the caller's: the driver
// cannot do this for them.
func (s *stallConn) Read(b []byte) (int, error) {
	n, err := s.Conn.Read(b)
	if n > 0 {
		s.mu.Lock()
		s.scan(b[:n])
		s.mu.Unlock()
	}
	return n, err
}

// SetDeadline, SetReadDeadline and SetWriteDeadline pass the client's
// deadlines on, but none sooner than the stall timeout until the connect
// response has come. The client bounds its handshake by ten times two
// thirds of the session timeout it asks for: 6.7ms for the session of 1ms
// that the settings check asks for to learn the shortest. A member that
// must commit the session with its quorum first took longer on a loaded
// machine, and the check found no member granting a session; over a link
// with a round trip of a few milliseconds it never would.
func (s *stallConn) SetDeadline(t time.Time) error { return s.Conn.SetDeadline(s.handshake(t)) }

// SetReadDeadline: see SetDeadline.
func (s *stallConn) SetReadDeadline(t time.Time) error { return s.Conn.SetReadDeadline(s.handshake(t)) }

// SetWriteDeadline: see SetDeadline.
func (s *stallConn) SetWriteDeadline(t time.Time) error {
	return s.Conn.SetWriteDeadline(s.handshake(t))
}

// handshake returns the deadline t, moved to the stall timeout from now if
// it is sooner and the connect response has not come yet.
func (s *stallConn) handshake(t time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.packets == 0 && !t.IsZero() {
		if floor := time.Now().Add(s.timeout); t.Before(floor) {
			return floor
		}
	}
	return t
}

func (s *stallConn) Close() error {
	s.mu.Lock()
	s.shut()
	s.mu.Unlock()
	return s.Conn.Close()
}

// shut marks the connection closed. s.mu must be held.
func (s *stallConn) shut() {
	if !s.closed {
		s.closed = true
		s.timer.Stop()
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
			from := s.headN
			s.headN += copy(s.head[s.headN:], b[:k])
			if s.packets > 0 {
				s.response(b[:k], from)
			}
		}
		s.left -= k
		b = b[k:]
		if s.left == 0 {
			s.packetDone()
		}
	}
}

// response looks at the bytes chunk of a response's body, which start at
// offset from, as they come in: the xid (0-3), then the zxid (4-11), which
// it zeroes in a reply's (see Read). s.mu must be held.
func (s *stallConn) response(chunk []byte, from int) {
	if s.headN < 4 || int32(binary.BigEndian.Uint32(s.head[:4])) < 0 {
		return // the xid is not all here yet, or it is no reply's
	}
	for i := max(from, 4); i < min(s.headN, 12); i++ {
		chunk[i-from] = 0
	}
	if s.headN >= 12 && from < 12 {
		s.stats.rewritten.Add(1)
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
