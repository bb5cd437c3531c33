package rueidis

import (
	"testing"

	"github.com/distlock/lock/drivers/internal/pipenode"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

// A hung server holds a command no longer than its context allows, and
// the error is one redlock's breaker counts as a timeout
// (redistest.HungNode).
func TestNode_hungServer(t *testing.T) {
	addr := redistest.Servers(t)[0]
	redistest.HungNode(t, func(t *testing.T) redlock.Node {
		open, err := opener(pipenode.URL{Raw: "redis://" + addr}) // the driver's options
		if err != nil {
			t.Fatal(err)
		}
		n := pipenode.Lazy(open, addr)
		t.Cleanup(func() { n.Close() })
		return n
	}, nil)
}
