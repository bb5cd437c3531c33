package redigo_test

import (
	"testing"

	"github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestConformance(t *testing.T) { redistest.Conformance(t, "redigo", redigo.Driver{}) }
