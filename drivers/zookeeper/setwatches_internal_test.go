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

// A session with requests in flight survives its connection being dropped
// again and again, and the client's reconnection races with nothing:
// go-zookeeper v1.0.4 reads its last zxid to set its watches again while
// its receiving goroutine may write it (see stallConn.Read), and the
// session always has a watch, the one keepWatch keeps. Without the gate,
// -race (as make test runs) stops this test at the first reconnection;
// without the kept watch, every gate waits for its timer. With a digest
// user, the client sends its credentials again on each connection before
// anything else, and the gate lets their answer through.
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
	if !s.watched.Load() {
		t.Fatal("after openSession, the session's kept watch is not known to be set")
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
	if n := s.gateTimeouts.Load(); n > 0 {
		t.Errorf("%d of 30 reconnections waited for the gate's timer: the kept watch did not open it", n)
	}
}
