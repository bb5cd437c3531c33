package goredis_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/drivers/internal/secrettest"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, goredis.Driver{}, secrettest.RedisSeeds)
}
