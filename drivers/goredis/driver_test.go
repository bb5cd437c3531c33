package goredis_test

import (
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/goredis"
)

func lockDriver(t *testing.T) driver.Driver { return goredis.Driver{} }
