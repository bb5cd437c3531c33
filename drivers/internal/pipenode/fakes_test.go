package pipenode

import (
	"context"
	"sync/atomic"
)

// fakeClient answers every command with its reply, once unblock (if not
// nil) is closed, and counts its closes.
type fakeClient struct {
	reply   any
	unblock chan struct{}
	closed  atomic.Int32

	listenErr error // if set, Listen's connection ends at once with it
}

func (f *fakeClient) Do(ctx context.Context, cmd Command) (any, error) {
	if f.unblock != nil {
		<-f.unblock
	}
	return f.reply, nil
}

// Listen returns a connection that has ended with listenErr, as the
// clients' is when its dial failed.
func (f *fakeClient) Listen(h Hooks) (Conn, <-chan error) {
	if f.listenErr == nil {
		panic("not used")
	}
	ended := make(chan error, 1)
	ended <- f.listenErr
	close(ended)
	return fakeConn{}, ended
}

type fakeConn struct{}

func (fakeConn) Subscribe(context.Context, string) error   { return nil }
func (fakeConn) Unsubscribe(context.Context, string) error { return nil }
func (fakeConn) Close()                                    {}
func (f *fakeClient) Close()                               { f.closed.Add(1) }
