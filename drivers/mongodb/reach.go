package mongodb

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"

	"github.com/distlock/lock/driver"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/address"
)

// reach watches the heartbeats of a client the driver opened from a DSN.
// It tells the connection's calls when no server can be reached, so that
// they fail at once instead of waiting for the Go driver's server
// selection to time out (30s by default). A server cannot be reached when
// its last heartbeat failed on a refused connection, a host name that does
// not resolve, or a TLS handshake refused for its certificate or protocol.
// It is safe for concurrent use.
type reach struct {
	mu   sync.Mutex
	lost map[string]bool         // address -> its last heartbeat found it unreachable
	down context.Context         // cancelled, with an errUnreachable cause, when every address is lost
	fire context.CancelCauseFunc // cancels down
}

// newReach returns a reach for a client of the seed list hosts.
func newReach(hosts []string) *reach {
	r := &reach{lost: make(map[string]bool)}
	for _, h := range hosts {
		r.lost[address.Address(h).Canonicalize().String()] = false
	}
	r.down, r.fire = context.WithCancelCause(context.Background())
	return r
}

// monitor returns the client's server monitor, which feeds r.
func (r *reach) monitor() *event.ServerMonitor {
	return &event.ServerMonitor{
		ServerHeartbeatSucceeded: func(e *event.ServerHeartbeatSucceededEvent) { r.note(e.ConnectionID, nil) },
		ServerHeartbeatFailed:    func(e *event.ServerHeartbeatFailedEvent) { r.note(e.ConnectionID, e.Failure) },
	}
}

// note records the outcome of a heartbeat on connection id ("host:port[-n]").
// When that leaves every address lost, it cancels the calls watching.
func (r *reach) note(id string, err error) {
	addr, _, _ := strings.Cut(id, "[")
	lost := unreachable(err) || wrongEnd(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost[addr] = lost
	if !lost {
		return
	}
	for _, l := range r.lost {
		if !l {
			return
		}
	}
	r.fire(errUnreachable{err})
	r.down, r.fire = context.WithCancelCause(context.Background())
}

// unreachable reports whether err says that nothing serves its address:
// a refused connection.
func unreachable(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// wrongEnd reports whether err says that the client cannot reach its
// server as configured, which retrying cannot fix: a host name that does
// not resolve, or a TLS handshake that failed on a certificate or a
// protocol mismatch (the errors the core takes for ErrMisconfigured).
func wrongEnd(err error) bool { return driver.IsMisconfigured(err) }

// watch calls cancel with an errUnreachable cause when a heartbeat after
// the call began leaves every server lost, until stop is called. A call
// that starts while every server is lost still tries: it learns of the
// next heartbeat (server selection asks for one within 500ms), and a
// server that came back answers it.
func (r *reach) watch(cancel context.CancelCauseFunc) (stop func() bool) {
	r.mu.Lock()
	down := r.down
	r.mu.Unlock()
	return context.AfterFunc(down, func() { cancel(context.Cause(down)) })
}

// errUnreachable is the cause of a call that reach cancelled: the failure
// of the heartbeat that left every server lost.
type errUnreachable struct{ err error }

func (e errUnreachable) Error() string {
	return "no server can be reached: " + e.err.Error()
}

func (e errUnreachable) Unwrap() error { return e.err }
