package nats_test

import (
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
)

// TestReleaseLease_extensionInFlight releases a lease while its extension
// is on its way, as Release does after KeepAlive's stop gave up on the
// keeper's last extension, which the stream leader may still be
// committing. It refuses a conditional write of a key while another is in
// flight (10164), and a read then shows the lease's own revision: the
// release must wait for the extension, not report that the lease is not
// held while the extension keeps the key for another TTL.
func TestReleaseLease_extensionInFlight(t *testing.T) {
	const rounds = 20
	cn := drivertest.Connect(t, nats.Driver{}, dsn(t))
	t.Cleanup(func() { cn.Close() })
	lc := cn.(driver.LeaseConn)
	ins := cn.(driver.Inspector)
	ctx := drivertest.Context(t, time.Minute)
	for i := range rounds {
		key, value := "in-flight", drivertest.RandomHex(8)
		lease, err := cn.Acquire(ctx, key, value, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		extended := make(chan error, 1)
		go func() {
			_, err := lc.ExtendLease(ctx, key, value, lease, time.Minute)
			extended <- err
		}()
		released := lc.ReleaseLease(ctx, key, value, lease)
		if err := <-extended; err != nil && !errors.Is(err, driver.ErrNotHeld) {
			t.Fatalf("round %d: ExtendLease: %v", i, err)
		}
		if released != nil {
			t.Fatalf("round %d: ReleaseLease of a held lease whose extension was in flight: %v", i, released)
		}
		if h, held, err := ins.Inspect(ctx, key); err != nil || held {
			t.Fatalf("round %d: after the release, Inspect = %+v, %v, %v; want the key free", i, h, held, err)
		}
	}
}
