package valkey

import (
	"testing"

	"github.com/distlock/lock/internal/redistest"
)

// A hung server holds a command no longer than its context allows, and
// the error is one redlock's breaker counts as a timeout.
func TestNode_hungServer(t *testing.T) { redistest.HungURLNode(t, library.Node) }
