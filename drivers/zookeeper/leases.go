package zookeeper

import (
	"context"
	"errors"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/go-zookeeper/zk"
)

// leaseKey names an acquisition: a key and the value it was tried with.
type leaseKey struct{ key, value string }

// leaseState is where an acquisition's node stands.
type leaseState int

const (
	acquiring leaseState = iota // its Acquire is running
	held                        // granted: the reaper deletes its node at its deadline
	doomed                      // not (or no longer) holding: the reaper deletes its node
)

// A lease is one acquisition's node and, once granted, its lease: the
// driver's record of the end it promised (the core's validity ends
// earlier, by the drift allowance). Its fields are guarded by conn.mu.
type lease struct {
	key    leaseKey
	sess   *session
	parent string
	ttl    time.Duration

	path     string // the node, once known to be made
	inflight bool   // a create is on its way, whose outcome is not known yet
	doubt    bool   // a create may have made a node whose name is not known
	state    leaseState
	sid      int64     // the session that owns the node
	token    uint64    // the node's creation zxid
	deadline time.Time // held: the lease's end, on this process's clock

	gone  bool      // forgotten: its session no longer counts it
	busy  bool      // the reaper is disposing of it
	retry time.Time // doomed: when the reaper tries again
}

// doom hands l's node to the reaper, which deletes it.
func (cn *conn) doom(l *lease) {
	cn.mu.Lock()
	if cn.leases[l.key] == l {
		delete(cn.leases, l.key)
	}
	if l.state != doomed && !l.gone {
		l.state = doomed
		cn.doomed = append(cn.doomed, l)
	}
	cn.mu.Unlock()
	cn.poke()
}

// forget drops l, whose node is known to be gone.
func (cn *conn) forget(l *lease) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.leases[l.key] == l {
		delete(cn.leases, l.key)
	}
	for i, d := range cn.doomed {
		if d == l {
			cn.doomed = append(cn.doomed[:i], cn.doomed[i+1:]...)
			break
		}
	}
	if !l.gone {
		l.gone = true
		l.sess.users--
	}
	l.state = doomed
}

// dispose deletes l's node, or, if its name is not known, any node of its
// value under its key's node; it returns nil once there is none.
func (cn *conn) dispose(ctx context.Context, l *lease) error {
	cn.mu.Lock()
	s, path, doubt, sid := l.sess, l.path, l.doubt, l.sid
	cn.mu.Unlock()
	if sid != 0 && !s.alive(sid) {
		return nil // its session expired, and the ensemble deleted its nodes
	}
	if path != "" {
		if _, err := cn.delete(ctx, s, path); err != nil {
			return err
		}
	}
	if !doubt {
		return nil
	}
	// A node whose name is not known: look for any of the value's.
	for _, moved := range []bool{false, true} {
		name, found, err := cn.find(ctx, s, l.parent, l.key.value, moved)
		if err != nil {
			return err
		}
		if found {
			if _, err := cn.delete(ctx, s, l.parent+"/"+name); err != nil {
				return err
			}
		}
	}
	return nil
}

// poke wakes the reaper.
func (cn *conn) poke() { driver.Signal(cn.wake) }

// reap deletes the nodes of leases past their deadline and of doomed
// attempts, retrying failed deletions, until the connection closes.
func (cn *conn) reap() {
	defer cn.work.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		t.Reset(cn.sweep())
		select {
		case <-cn.ctx.Done():
			return
		case <-cn.wake:
		case <-t.C:
		}
	}
}

// sweep starts the disposal of what is due and returns the time until the
// next thing will be.
func (cn *conn) sweep() time.Duration {
	now := time.Now()
	next := time.Hour
	var due []*lease
	cn.mu.Lock()
	for k, l := range cn.leases {
		if l.state != held {
			continue
		}
		if d := l.deadline.Sub(now); d > 0 {
			next = min(next, d)
			continue
		}
		delete(cn.leases, k)
		l.state = doomed
		cn.doomed = append(cn.doomed, l)
	}
	for _, l := range cn.doomed {
		switch {
		case l.busy || l.inflight:
		case now.Before(l.retry):
			next = min(next, l.retry.Sub(now))
		default:
			l.busy = true
			due = append(due, l)
		}
	}
	cn.mu.Unlock()
	for _, l := range due {
		cn.work.Add(1)
		go func() {
			defer cn.work.Done()
			ctx, cancel := context.WithTimeout(cn.ctx, cn.c.cfg.RequestTimeout)
			err := cn.dispose(ctx, l)
			cancel()
			if err == nil || errors.Is(err, zk.ErrClosing) {
				cn.forget(l)
			} else {
				cn.mu.Lock()
				l.busy = false
				l.retry = time.Now().Add(100 * time.Millisecond)
				cn.mu.Unlock()
			}
			cn.poke()
		}()
	}
	return next
}
