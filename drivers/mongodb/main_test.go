package mongodb_test

import (
	"testing"

	"github.com/distlock/lock/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
