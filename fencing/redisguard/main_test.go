package redisguard_test

import (
	"testing"

	"github.com/distlock/lock/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
