package redigo_test

import (
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/redigo"
)

func lockDriver(t *testing.T) driver.Driver { return redigo.Driver{} }
