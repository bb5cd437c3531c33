package redigo_test

import (
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/redigo"
)

func FuzzOpenConnector(f *testing.F) {
	dsntest.Fuzz(f, redigo.Driver{}, secrettest.RedisSeeds)
}
