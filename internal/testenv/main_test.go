package testenv_test

import (
	"testing"

	"github.com/distlock/lock/internal/redistest"
)

// The smoke test talks to every Redis server: it must not run while
// another package's fault tests have some of them killed or hung.
func TestMain(m *testing.M) { redistest.Main(m) }
