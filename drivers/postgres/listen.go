package postgres

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5"
)

// The listener's timing.
const (
	// listenBackoffMin and listenBackoffMax bound the wait before the
	// listener reconnects; it doubles after each failure, with jitter.
	listenBackoffMin = 50 * time.Millisecond
	listenBackoffMax = 2 * time.Second

	// listenConnectTimeout bounds one attempt to connect and LISTEN.
	listenConnectTimeout = 10 * time.Second

	// listenPingTimeout bounds that ping.
	listenPingTimeout = 5 * time.Second

	// watchWait bounds how long Watch waits for a connection attempt in
	// progress, so that a waiter is never held up for long by an
	// unreachable server: the core polls meanwhile.
	watchWait = time.Second

	// closeTimeout bounds the goodbye to the server of a closing connection.
	closeTimeout = time.Second
)

// listenIdle is how long the listener waits in silence before it pings the
// server, so that a dead connection is noticed. Tests shorten it.
var listenIdle = 30 * time.Second

// listener listens on one dedicated connection for the releases that the
// lease table's channel announces, and hands each to the watchers of its
// key. It starts at the first watch, reconnects after the connection is
// lost, and stops at close.
type listener struct {
	channel string
	connect func(context.Context) (*pgx.Conn, error) // a connection that listens on channel

	mu       sync.Mutex
	watchers driver.Subscribers // the watches' channels, by key
	started  bool
	closed   bool
	attempt  chan struct{} // closed when the connection attempt in progress ends; nil if none is
	stop     context.CancelFunc
	done     chan struct{} // closed when run returns
}

func newListener(channel string, connect func(context.Context) (*pgx.Conn, error)) *listener {
	return &listener{channel: channel, connect: connect}
}

// watch subscribes to releases of key. The subscription is in place when it
// returns: a release that commits later is announced on the watch's channel
// as soon as the listener hears it or, if the listening connection is down
// or not yet up, when it is back (a release may have been missed then, so
// every watcher is woken). Watch starts the listener if it has not started,
// and waits for a connection attempt in progress up to watchWait, to spare
// the caller a spurious wake-up; it never fails because the server is
// unreachable. It fails if ctx is done or the connection is closed.
func (l *listener) watch(ctx context.Context, key string) (driver.Watch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &watch{l: l, key: key, c: make(chan struct{}, 1)}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, errClosed
	}
	l.watchers.Add(key, w.c)
	if !l.started {
		l.start()
	}
	attempt := l.attempt
	l.mu.Unlock()

	if attempt != nil {
		t := time.NewTimer(watchWait)
		defer t.Stop()
		select {
		case <-attempt:
		case <-t.C:
		case <-ctx.Done():
			w.Close()
			return nil, ctx.Err()
		}
	}
	// The caller tries again as soon as Watch returns, so a wake-up for a
	// release before now (the listener's first connection wakes everyone)
	// would only cost it a useless attempt.
	select {
	case <-w.c:
	default:
	}
	return w, nil
}

// start starts the listener's goroutine. l.mu must be held.
func (l *listener) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.started = true
	l.stop = cancel
	l.done = make(chan struct{})
	l.attempt = make(chan struct{})
	go l.run(ctx)
}

// run connects, listens and reconnects until ctx is done.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	backoff := listenBackoffMin
	for {
		cctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
		conn, err := l.connect(cctx)
		cancel()
		l.mu.Lock()
		if err == nil {
			// Before the attempt is seen to end, so that a Watch waiting
			// for it finds the wake-up it has no use for, and drops it.
			l.watchers.WakeAll()
		}
		close(l.attempt)
		l.attempt = nil
		l.mu.Unlock()
		if err == nil {
			up := time.Now()
			l.receive(ctx, conn)
			closeConn(conn)
			if time.Since(up) > listenBackoffMax {
				backoff = listenBackoffMin
			}
		}
		if ctx.Err() != nil {
			return
		}
		t := time.NewTimer(jitter(backoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, listenBackoffMax)
		l.mu.Lock()
		l.attempt = make(chan struct{})
		l.mu.Unlock()
	}
}

// receive hands notifications to watchers until the connection fails or
// ctx is done. After listenIdle without a notification it pings the
// server, so that a connection that died silently is not trusted forever.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) {
	for {
		wctx, cancel := context.WithTimeout(ctx, listenIdle)
		n, err := conn.WaitForNotification(wctx)
		idle := wctx.Err() != nil
		cancel()
		if n != nil && n.Channel == l.channel {
			l.notify(n.Payload)
		}
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			return
		case idle && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, listenPingTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err == nil {
				continue
			}
		}
		return
	}
}

// notify wakes the watchers of key.
func (l *listener) notify(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watchers.Wake(key)
}

// close stops the listener and waits until its goroutine has returned and
// its connection is closed.
func (l *listener) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	started, stop, done := l.started, l.stop, l.done
	l.mu.Unlock()
	if started {
		stop()
		<-done
	}
}

// closeConn closes a connection, giving the server a short while to hear
// the goodbye.
func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	c.Close(ctx)
}

// jitter draws a delay uniformly from [d/2, d].
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// watch is a subscription to releases of one key.
type watch struct {
	l   *listener
	key string
	c   chan struct{}
}

var _ driver.Watch = (*watch)(nil)

func (w *watch) Released() <-chan struct{} { return w.c }

// Close ends the subscription. Closing it again does nothing.
func (w *watch) Close() error {
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watchers.Remove(w.key, w.c)
	return nil
}
