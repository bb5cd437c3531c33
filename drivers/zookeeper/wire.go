package zookeeper

import (
	"encoding/binary"
	"errors"
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
	gating     bool               // the connection resumed a session that has watches: gate
	watchXids  map[int32]struct{} // unanswered requests that set a watch
	ending     bool               // a connection that does not gate delivered a watch's answer: it ends
	watchesSet chan struct{}      // closed once setWatches is written
	gated      bool               // the gate was met once: no more
	hold       bool               // the Read being scanned waits at the gate

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
	watched      atomic.Bool  // a watch's answer was delivered since the session began
	cuts         atomic.Int64 // connections ended after a watch's answer (see stallConn.Read)
	gateTimeouts atomic.Int64 // gates that opened on their timer
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

// errWatchesSet ends a new session's connection once a watch is set
// through it (see Read).
var errWatchesSet = errors.New("zookeeper: connection ended after the session's first watch, to resume the session with it")

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
			s.stats.watched.Store(false) // the last session's watches are gone
		}
		s.gating = resumes && s.stats.watched.Load()
	case len(b) >= 12:
		// Length, xid, opcode, then the request.
		xid := int32(binary.BigEndian.Uint32(b[4:8]))
		switch int32(binary.BigEndian.Uint32(b[8:12])) {
		case opSetWatches:
			select {
			case <-s.watchesSet:
			default:
				close(s.watchesSet)
			}
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
// is then followed by the setWatches request, written through Write. So:
//   - On a connection that resumes a session whose watches were set, the
//     Read that completes the header of the first response with a zxid
//     waits (see gate) until setWatches has been written: that orders the
//     read before every write. The driver keeps a watch on every session
//     it opens (see session.keepWatch), so there is a setWatches to wait
//     for.
//   - On any other connection (one that starts a session, or resumes one
//     that never had a watch), the table is empty at first; the first
//     watch enters it, under the table's lock, as the receiving goroutine
//     takes in the watch's answer, after every write so far. A read after
//     that lock is ordered after those writes, but not after later ones. So
//     the connection delivers the answer of the first request that sets a
//     watch, and ends there: the client resumes the session over a new
//     connection, at once, with the watch to set again (the first case).
//     Requests answered later fail with zk.ErrConnectionClosed and are
//     tried again. Each new session costs one more connection.
//
// Responses without a zxid pass (pings, watch events, the digest
// credentials the client sends again first on each connection, answered
// with zxid 0), so nothing the setWatches request queues behind is held.
// Connections given to [New] are the caller's: the driver cannot do this
// for them.
func (s *stallConn) Read(b []byte) (int, error) {
	s.mu.Lock()
	ending := s.ending
	s.mu.Unlock()
	if ending {
		// Not closed here: the client closes it once its goroutines end,
		// and a request it writes meanwhile fails as a lost connection's.
		return 0, errWatchesSet
	}
	n, err := s.Conn.Read(b)
	if n > 0 {
		s.mu.Lock()
		n = s.scan(b[:n])
		hold := s.hold
		s.hold = false
		s.mu.Unlock()
		if hold && !s.gate() {
			return 0, net.ErrClosed
		}
	}
	return n, err
}

// gate waits until setWatches has been written, and reports whether the
// response held may be delivered: not if the connection was closed
// meanwhile (the client's next read fails anyway). If the session has no
// watch to set (its kept watch fired, and is not yet set again), nothing
// reads the last zxid and no setWatches comes: the wait ends on a timer,
// the stall timeout, once per connection.
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

// scan follows the packets in b, read from the member, and returns how
// many of its bytes the client may have: all of them, or those up to the
// end of the packet after which a new session's connection ends. s.mu must
// be held.
func (s *stallConn) scan(b []byte) int {
	n := len(b)
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
			if s.headN == len(s.head) && s.packets > 0 && s.gating && !s.gated {
				// A response's header: xid, then zxid.
				xid := int32(binary.BigEndian.Uint32(s.head[:4]))
				zxid := int64(binary.BigEndian.Uint64(s.head[4:12]))
				if xid >= 0 && zxid > 0 {
					s.hold, s.gated = true, true
				}
			}
		}
		s.left -= k
		b = b[k:]
		if s.left == 0 {
			s.packetDone()
			if s.ending {
				return n - len(b)
			}
		}
	}
	return n
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
		if s.headN < 4 {
			return
		}
		xid := int32(binary.BigEndian.Uint32(s.head[:4]))
		if _, ok := s.watchXids[xid]; ok {
			delete(s.watchXids, xid)
			s.stats.watched.Store(true)
			if !s.gating {
				s.ending = true
				s.stats.cuts.Add(1)
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
