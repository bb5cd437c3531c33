package zookeeper

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
	"github.com/go-zookeeper/zk"
)

// A session with a watch and requests in flight survives its connection
// being dropped again and again, and the client's reconnection races with
// nothing: go-zookeeper v1.0.4 reads its last zxid to set its watches
// again while its receiving goroutine may write it (see stallConn.Read).
// Without the zeroed zxids, -race (as make test runs) stops this test at
// the first reconnection or so. With a digest user, the client sends its
// credentials again on each connection before anything else.
func TestReconnect_resetsWatchesWithoutARace(t *testing.T) {
	hosts := drivertest.List(t, "DISTLOCK_ZOOKEEPER_SERVERS")
	for name, user := range map[string]string{"anonymous": "", "digest": "gate:secret@"} {
		t.Run(name, func(t *testing.T) {
			testReconnect(t, "zk://"+user+strings.Join(hosts, ",")+"/distlock-test?member_timeout=500ms")
		})
	}
}

func testReconnect(t *testing.T, dsn string) {
	dc, err := Driver{}.OpenConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := dc.(*Connector).openSession(ctx, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	sid := s.zc.SessionID()
	// A watch on a node that never exists: the client sets it again on
	// every connection, and the member never fires it.
	if _, _, _, err := s.zc.ExistsW("/distlock-test/.never-made"); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s.zc.Exists("/")
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()

	for i := range 30 {
		old := s.latest.Load()
		old.Conn.Close() // as a member that goes away does
		for s.latest.Load() == old || s.zc.State() != zk.StateHasSession {
			if ctx.Err() != nil {
				t.Fatalf("reconnection %d: the session did not come back in time (state %v)", i, s.zc.State())
			}
			time.Sleep(time.Millisecond)
		}
		if _, _, err := s.zc.Exists("/"); err != nil && err != zk.ErrConnectionClosed {
			t.Fatalf("reconnection %d: %v", i, err)
		}
	}
	if got := s.zc.SessionID(); got != sid {
		t.Errorf("session %x became %x: the reconnections lost it", sid, got)
	}
	if s.rewritten.Load() == 0 {
		t.Error("no response's zxid was zeroed")
	}
}
