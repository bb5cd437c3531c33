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
}

func (f *fakeClient) Do(ctx context.Context, cmd Command) (any, error) {
	if f.unblock != nil {
		<-f.unblock
	}
	return f.reply, nil
}

func (f *fakeClient) Listen(h Hooks) (Conn, <-chan error) { panic("not used") }
func (f *fakeClient) Close()                              { f.closed.Add(1) }
