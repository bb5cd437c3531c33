package locktest

import (
	"context"
	"time"

	"github.com/distlock/lock/driver"
)

// grant is one lock granted through a Backend, as it knows it.
type grant struct {
	cn      *conn
	key     string
	value   string
	token   uint64        // as handed out
	fenced  bool          // token is set
	inner   driver.Lease  // as the wrapped conn last described it; guarded by Backend.mu
	expires time.Time     // the start of the last acquisition or extension, plus its TTL; guarded by Backend.mu
	state   grantState    // guarded by Backend.mu
	lost    chan struct{} // handed to the core as Lease.Lost; closed by whoever makes the grant lost
	over    chan struct{} // closed when the grant ends, to stop watching the wrapped lease's Lost; nil if not watched
}

// grantState is what a Backend knows of a grant. A grant starts held and
// ends once, released or lost.
type grantState int

const (
	grantHeld grantState = iota
	grantReleased
	grantLost
)

// heldAt reports whether g is held at now. Backend.mu must be held.
func (g *grant) heldAt(now time.Time) bool {
	return g.state == grantHeld && now.Before(g.expires)
}

// granted records a grant on key to value through cn, of lease until
// expires, and returns the lease to hand to the core.
func (b *Backend) granted(cn *conn, key, value string, lease driver.Lease, expires time.Time) driver.Lease {
	b.mu.Lock()
	defer b.mu.Unlock()
	ks := b.key(key)
	if prev := ks.cur; prev != nil {
		// The key was free in the backend to be granted again, so the
		// previous grant is over.
		b.finish(prev, grantReleased)
	}
	g := &grant{cn: cn, key: key, value: value, fenced: lease.Fenced, inner: lease, expires: expires, lost: make(chan struct{})}
	if lease.Fenced {
		g.token = ks.token(lease.Token)
	}
	ks.cur = g
	if lease.Lost != nil {
		g.over = make(chan struct{})
		go b.watchLost(g, lease.Lost)
	}
	return driver.Lease{Token: g.token, Fenced: g.fenced, Lost: g.lost}
}

// watchLost makes g lost when the wrapped driver closes lost, its own
// loss signal, until g ends or its conn closes.
func (b *Backend) watchLost(g *grant, lost <-chan struct{}) {
	select {
	case <-lost:
	case <-g.over:
		return
	case <-g.cn.closed:
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if g.state == grantHeld {
		b.finish(g, grantLost)
		close(g.lost)
	}
}

// finish ends g in state s, if it is held. Backend.mu must be held.
func (b *Backend) finish(g *grant, s grantState) {
	if g.state != grantHeld {
		return
	}
	g.state = s
	if g.over != nil {
		close(g.over)
	}
	if ks := b.keys[g.key]; ks != nil && ks.cur == g {
		ks.cur = nil
		if s == grantLost {
			ks.gone = g
		}
	}
}

// lookup returns the grant on key to value, and the lease the wrapped
// conn last gave it, or nil if b knows of none that may be held. lost
// reports that b made the latest grant on key, to value, lost: the backend
// no longer holds it, whatever it says.
func (b *Backend) lookup(key, value string) (g *grant, lease driver.Lease, lost bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ks := b.keys[key]
	switch {
	case ks == nil:
	case ks.cur != nil && ks.cur.value == value:
		return ks.cur, ks.cur.inner, false
	case ks.gone != nil && ks.gone.value == value:
		return nil, driver.Lease{}, true
	}
	return nil, driver.Lease{}, false
}

// releaseInner lets the backend let go of g, a grant that b has made
// lost, under its own timeout. A failure leaves the key to its TTL.
func (g *grant) releaseInner() {
	ctx, cancel := context.WithTimeout(context.Background(), loseTimeout)
	defer cancel()
	g.cn.b.mu.Lock()
	lease := g.inner
	g.cn.b.mu.Unlock()
	g.cn.release(ctx, g.key, g.value, lease, true)
}
