package lock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// secretConnector is a connector held by value with a secret in its
// fields, and a String that leaves it out.
type secretConnector struct {
	password string
	conn     driver.Conn
}

func (c secretConnector) Connect(context.Context) (driver.Conn, error) { return c.conn, nil }
func (c secretConnector) String() string                               { return "secret(host=db)" }

// opaqueConnector has a secret and no String.
type opaqueConnector struct{ secretConnector }

// Printing a client or a lock, with any verb, shows neither the
// connector's secrets nor the lock's value (with which anyone could
// release it).
func TestFormat_clientAndLockHideSecretsAndValue(t *testing.T) {
	sc := &scriptedConn{}
	for _, connector := range []driver.Connector{
		secretConnector{password: "s3cr3t-pw", conn: sc},
		opaqueConnector{secretConnector{password: "s3cr3t-pw", conn: sc}},
	} {
		c := lock.OpenConnector(connector)
		l := mustAcquire(t, c, "k")
		value := sc.acquireCalls()[len(sc.acquireCalls())-1].value
		for _, verb := range []string{"%v", "%+v", "%s", "%#v"} {
			for _, x := range []any{c, l} {
				out := fmt.Sprintf(verb, x)
				if strings.Contains(out, "s3cr3t-pw") || strings.Contains(out, value) {
					t.Errorf("Sprintf(%q, %T) = %s: it shows a secret or the lock's value", verb, x, out)
				}
			}
		}
		if got := fmt.Sprint(l); !strings.Contains(got, `"k"`) {
			t.Errorf("a lock prints as %s, want its key", got)
		}
		if got := fmt.Sprint(c); !strings.Contains(got, "lock.Client(") {
			t.Errorf("a client prints as %s", got)
		}
		c.Close()
	}
}
