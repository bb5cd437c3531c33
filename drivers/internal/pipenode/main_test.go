package pipenode

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

func TestMain(m *testing.M) { drivertest.Main(m) }
