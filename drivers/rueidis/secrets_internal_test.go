package rueidis

import (
	"testing"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

func TestSecrets_neverPrinted(t *testing.T) {
	secrettest.PipelinedRedisDriver(t, "rueidis", redistest.ValkeyServers(t), library.Clients, New, redlock.WithFencing(true))
}
