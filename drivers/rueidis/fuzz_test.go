package rueidis_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/rueidis"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, rueidis.Driver{}, secrettest.RedisSeeds)
}
