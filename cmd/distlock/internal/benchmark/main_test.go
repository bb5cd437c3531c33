package benchmark

import (
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

// TestMain holds the shared Redis servers alone, and shares PostgreSQL,
// since a test measures on both, and checks that no goroutine was left
// behind.
func TestMain(m *testing.M) { testenv.Main(m, testenv.Redis, testenv.Postgres) }
