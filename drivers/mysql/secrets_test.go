package mysql_test

import (
	"strings"
	"testing"

	"github.com/distlock/lock/drivers/internal/secrettest"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
	"github.com/distlock/lock/drivertest"
)

// TestSecrets_neverPrinted puts a password in DSNs and checks that it
// shows in nothing the driver and the lock.Client print, return or log:
// connectors, malformed DSNs, and clients the server refuses or cannot be
// reached by. (The right password of an account that connects is checked
// by TestTLSAndPassword.)
func TestSecrets_neverPrinted(t *testing.T) {
	pw := secrettest.Password
	addr := config(t, server(t)).Addr
	closed := secrettest.ClosedAddr(t)

	t.Run("printed", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, d := range []string{
			"distlock:" + pw + "@tcp(" + addr + ")/distlock",
			"u:" + pw + "@unix(/nonexistent.sock)/db?distlock_table=locks",
		} {
			connector, err := mysqldriver.Driver{}.OpenConnector(d)
			sc.Connector("the connector of Driver.OpenConnector", connector, err)
		}
		sc.Printed("a Config", mysqldriver.Config{Table: "t"})
	})

	t.Run("malformedDSN", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, d := range []string{
			"u:" + pw + "@tcp(" + addr + ")/db?distlock_table=bad-name",
			"u:" + pw + "@tcp(" + addr + ")/db?distlock_tabel=locks",
			"u:" + pw + "@tcp(" + addr + ")/db?distlock_create_table=" + pw,
			"u:" + pw + "@tcp(" + addr + ")/db?parseTime=" + pw,
			"u:" + pw + "@tcp(" + addr + ")/db?timeout=" + pw,
			"u:" + pw + "@tcp(" + addr + ")/db?tls=" + pw,
			"u:" + pw + "@tcp(" + addr + ")/d%zz",
			"u:" + pw + "@tcp(" + addr + ")",
			"u:" + pw + "/x@tcp(" + addr + ")",
			"u:" + pw + "@tcp(" + addr,
			"u:" + pw + "@" + pw + "(" + addr + ")",
			"u:" + pw + "@/db",
			"mysql://u:" + pw + "@" + addr + "/db",
		} {
			sc.OpenFails("mysql", d)
		}
	})

	t.Run("failing", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, d := range []string{
			"u:" + pw + "@tcp(" + closed + ")/db",
			"distlock:" + pw + "@tcp(" + addr + ")/distlock", // the account has no password
			drivertest.WithParams(strings.Replace(wrongPassword(t), wrongPasswordText, pw, 1), "distlock_table", freshTable(t, server(t))),
		} {
			sc.Use(secrettest.Elide(d), sc.Open("mysql", d), secrettest.Fails)
		}
	})
}
