package valkey_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/valkey"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, valkey.Driver{}, secrettest.RedisSeeds)
}
