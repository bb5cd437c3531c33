package drivertest

import (
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

// Server is the lock on a shared test server that [Main] holds while a
// package's tests run, so that they do not run while another package's
// tests break that server (go test runs packages at once).
type Server = testenv.Servers

// Shared is the lock on the test server name (the name of its
// scripts/services.d file), shared with other packages' tests.
func Shared(name string) Server { return testenv.Lock(name, false) }

// Alone is the lock on the test server name, held alone: for tests that
// kill, hang or restart it.
func Alone(name string) Server { return testenv.Lock(name, true) }

// Main runs m's tests holding the locks on servers, then checks with
// goleak that no goroutine outlived them, and exits. Use it as TestMain.
// In a worker process of a cross-process run it takes no lock: the parent
// test holds them.
func Main(m *testing.M, servers ...Server) { testenv.Main(m, servers...) }

// Hold takes the locks on servers, for a test that needs a server besides
// its package's own (FerretDB keeps its data in PostgreSQL, say), and
// returns the function that releases them.
func Hold(servers ...Server) (release func(), err error) { return testenv.Hold(servers...) }
