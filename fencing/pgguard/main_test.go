package pgguard_test

import (
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

// The tests share the PostgreSQL server, but never with the postgres
// driver's, which restart it.
func TestMain(m *testing.M) { testenv.Main(m, testenv.Postgres) }
