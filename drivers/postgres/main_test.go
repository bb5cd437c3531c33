package postgres_test

import (
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

// TestRestart restarts the PostgreSQL server: no other package's tests
// use it meanwhile.
func TestMain(m *testing.M) { testenv.Main(m, testenv.PostgresAlone) }
