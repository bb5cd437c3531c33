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
	done        chan struct{} // closed with closed

	// The client's race (see Read).
	writes     int                // packets written
	gating     bool               // the connection resumed a session that has watches
	needSW     int                // setWatches writes that open the gate (gating)
	seenSW     int                // setWatches written here
	watchXids  map[int32]struct{} // unanswered requests that set a watch
	rewriting  bool               // responses' zxids are zeroed (not gating, see Read)
	watchesSet chan struct{}      // closed when the gate may open
	gated      bool               // a response was held once: no more
	hold       bool               // the Read being scanned waits at the gate

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
	negotiated   atomic.Int64 // the session timeout, in ms, from the latest connect response
	stalls       atomic.Int64 // connections closed for a stall
	watched      atomic.Bool  // a watch's answer was delivered since the session began
	pendingSW    atomic.Int64 // setWatches requests made and not yet written, as far as is known
	gateTimeouts atomic.Int64 // gates that opened on their timer
	rewritten    atomic.Int64 // responses whose zxid was zeroed
}

func newStallConn(c net.Conn, timeout time.Duration, stats *connStats) *stallConn {
	s := &stallConn{Conn: c, timeout: timeout, stats: stats, done: make(chan struct{}),
		watchXids: make(map[int32]struct{}), watchesSet: make(chan struct{})}
	s.timer = time.AfterFunc(time.Hour, s.check)
	s.timer.Stop()
	return s
}

// Opcodes of the client's requests (ZooKeeper's OpCode).
const (
	opExists       = 3
	opGetData      = 4
	opGetChildren  = 8
	opGetChildren2 = 12
	opSetWatches   = 101
)

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
		resumes := len(b) < 28 || binary.BigEndian.Uint64(b[20:28]) != 0
		if !resumes {
			// The last session's watches, and its setWatches requests, are gone.
			s.stats.watched.Store(false)
			s.stats.pendingSW.Store(0)
		}
		s.gating = resumes && s.stats.watched.Load()
	case len(b) >= 12:
		// Length, xid, opcode, then the request.
		xid := int32(binary.BigEndian.Uint32(b[4:8]))
		switch int32(binary.BigEndian.Uint32(b[8:12])) {
		case opSetWatches:
			s.seenSW++
			if s.stats.pendingSW.Add(-1) < 0 {
				s.stats.pendingSW.Store(0)
			}
			if s.gating && s.seenSW >= s.needSW {
				s.openGate()
			}
			s.rewriting = false // the client read its last zxid before this
		case opExists, opGetData, opGetChildren, opGetChildren2:
			if setsWatch(b[12:]) {
				s.watchXids[xid] = struct{}{}
			}
		}
	}
	s.writes++
	s.mu.Unlock()
	return s.Conn.Write(b)
}

// openGate lets a response held at the gate through. s.mu must be held.
func (s *stallConn) openGate() {
	select {
	case <-s.watchesSet:
	default:
		close(s.watchesSet)
	}
}

// setsWatch reports whether a read request's body (a path, then the watch
// flag) asks for a watch; it says yes to a body it cannot read.
func setsWatch(body []byte) bool {
	if len(body) < 4 {
		return true
	}
	n := int(int32(binary.BigEndian.Uint32(body)))
	return n < 0 || len(body) < 4+n+1 || body[4+n] != 0
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
// The read happens only if the client's table of watches is not empty, and
// is then followed by a setWatches request, written through Write:
//   - On a connection that resumes a session whose watches were set, the
//     first response with a zxid waits (see gate) until this connection's
//     setWatches is written, which orders the read before every write. If
//     earlier connections of the session ended before writing theirs
//     (queued, they go out first on the next connection), it waits for
//     those too. The driver keeps a watch on every session it opens (see
//     session.keepWatch), so there is a setWatches to wait for.
//   - On any other connection (a new session's), the table is empty at
//     first; the first watch enters it, under the table's lock, as the
//     receiving goroutine takes in that watch's answer, which orders every
//     write up to that answer before a read that comes after the lock. But
//     the client may set its watches later than that (its goroutine
//     delayed), and read the last zxid while later responses are taken in.
//     So from the first watch's answer on, the zxid of every response is
//     zeroed before the client sees it, and the client does not write it,
//     until a setWatches is written here (the client has read by then).
//     The client's last zxid stays that of the watch's answer until the
//     next connection: it may then resume the session on a member that is
//     behind by what it did since (the driver reads only after a sync or
//     its own write, see the package documentation), and the member may
//     fire watches for changes the client had seen (the driver sets them
//     again). No response is held.
//
// Responses without a zxid pass as they are (pings, watch events, the
// digest credentials the client sends again first on each connection,
// answered with zxid 0), so nothing that a setWatches request queues
// behind is held. Connections given to [New] are the caller's: the driver
// cannot do this for them.
func (s *stallConn) Read(b []byte) (int, error) {
	n, err := s.Conn.Read(b)
	if n > 0 {
		s.mu.Lock()
		s.scan(b[:n])
		hold := s.hold
		s.hold = false
		s.mu.Unlock()
		if hold && !s.gate() {
			return 0, net.ErrClosed
		}
	}
	return n, err
}

// gate waits until the setWatches writes it waits for were made (see
// Read), and reports whether the response held may be delivered: not if
// the connection was closed meanwhile (the client's next read fails
// anyway). If the session has no watch to set after all (its kept watch
// fired, and is not yet set again), nothing reads the last zxid and no
// setWatches comes: the wait ends after the stall timeout.
func (s *stallConn) gate() bool {
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case <-s.watchesSet:
		return true
	case <-s.done:
		return false
	case <-t.C:
		s.stats.gateTimeouts.Add(1)
		s.stats.pendingSW.Store(0) // counted one too many: start afresh
		return true
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
// offset from, as they come in: the xid (0-3), then the zxid (4-11). It
// holds the first response with a zxid on a gating connection, and zeroes
// the zxid while rewriting (see Read). s.mu must be held.
func (s *stallConn) response(chunk []byte, from int) {
	if s.headN < 4 || int32(binary.BigEndian.Uint32(s.head[:4])) < 0 {
		return // the xid is not all here yet, or it is no reply's
	}
	if s.rewriting {
		for i := max(from, 4); i < min(s.headN, 12); i++ {
			chunk[i-from] = 0
		}
		if s.headN >= 12 && from < 12 {
			s.stats.rewritten.Add(1)
		}
		return
	}
	if s.gating && !s.gated && s.headN >= 12 && from < 12 && int64(binary.BigEndian.Uint64(s.head[4:12])) > 0 {
		s.hold, s.gated = true, true
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
		if s.gating && s.headN >= 16 && binary.BigEndian.Uint64(s.head[8:16]) != 0 {
			// The session goes on (not expired): the client sets its
			// watches, after those of connections that ended before
			// writing theirs.
			s.needSW = int(s.stats.pendingSW.Add(1))
		}
		s.answered()
	case s.headN >= 4 && int32(binary.BigEndian.Uint32(s.head[:4])) == -1:
		// A watch event: no answer to anything, but a sign of life.
		s.progress = time.Now()
	default:
		s.answered()
		if s.headN < 4 {
			return
		}
		xid := int32(binary.BigEndian.Uint32(s.head[:4]))
		if _, ok := s.watchXids[xid]; ok {
			delete(s.watchXids, xid)
			s.stats.watched.Store(true)
			if !s.gating && s.seenSW == 0 {
				s.rewriting = true
			}
		}
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
