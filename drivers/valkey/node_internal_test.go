package valkey

import (
	"testing"

	"github.com/distlock/lock/internal/redistest"
)

// A hung server holds a command no longer than its context allows, and
// the error is one redlock's breaker counts as a timeout. The server is a
// Valkey one: this package holds the Valkey servers' lock, not Redis's
// (make test: another package restarted the Redis server this test hung).
func TestNode_hungServer(t *testing.T) { redistest.HungURLNode(t, redistest.Valkey, library.Node) }
