package rueidis_test

import (
	"testing"

	"github.com/distlock/lock/internal/redistest"
)

func TestTLSAndAuth(t *testing.T) { redistest.TLSAndAuth(t, "rueidis") }
