package faults_test

import (
	"testing"

	"github.com/distlock/lock/internal/testenv"
	"go.uber.org/goleak"
)

// toxiproxy v2.12.0 can leave a link's toxic stub blocked on a send after
// its proxy stopped: its leak, not ours.
func TestMain(m *testing.M) {
	testenv.MainIgnoring(m, []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2/toxics.(*ToxicStub).Run"),
	}, testenv.Redis)
}
