package nats_test

import (
	"net/url"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
)

// wrongPasswordClient returns a client of the test cluster whose password
// is wrong, for Harness.Misconfigured.
func wrongPasswordClient(t *testing.T) *lock.Client {
	u, err := url.Parse(server(t))
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	u.User = url.UserPassword(u.User.Username(), "wrong-"+pw)
	return drivertest.Open(t, "nats", u.String()+"?request_timeout=3s")
}
