package nats_test

import (
	"sync"
	"testing"

	"github.com/distlock/lock/drivers/nats"
)

// TestConnect_clientsCreateOneBucketTogether: clients that open a new
// bucket at once, as processes started together do, all connect. While
// one creates the bucket's stream, the servers leave the others' reads
// unanswered, then say it does not exist; the driver once failed them as
// misconfigured or at the request timeout (4 of 6, in most runs).
func TestConnect_clientsCreateOneBucketTogether(t *testing.T) {
	full := dsn(t)
	connector, err := nats.Driver{}.OpenConnector(full)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			c, err := connector.Connect(t.Context())
			if err != nil {
				t.Errorf("client %d of 6: %v", i, err)
				return
			}
			c.Close()
		})
	}
	wg.Wait()
}
