package nats_test

import (
	"strings"
	"testing"

	"github.com/distlock/lock/driver/dsn/dsntest"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
)

// TestConnector_printed prints connectors of DSNs with a password, and
// with a token: neither shows.
func TestConnector_printed(t *testing.T) {
	pw := secrettest.Password
	dsntest.Printed(t, nats.Driver{}, pw, map[string]string{
		"nats://app:" + pw + "@a,b:4223?bucket=locks": "nats(servers=nats://a:4222,nats://b:4223 user=app bucket=locks request_timeout=10s attempt_timeout=1s)",
		"nats://" + pw + "@a":                         "nats(servers=nats://a:4222 token=xxxxx bucket=distlock request_timeout=10s attempt_timeout=1s)",
	})
}

// TestSecrets_neverPrinted puts a password in DSNs and checks that it
// shows in nothing the driver and the lock.Client print, return or log:
// malformed DSNs, and clients the servers refuse or that reach none.
func TestSecrets_neverPrinted(t *testing.T) {
	pw := secrettest.Password
	t.Run("malformedDSN", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, d := range []string{
			"nats://u:" + pw + "@h?bucket=a.b",
			"nats://u:" + pw + "@h?bucket=" + pw + ".x",
			"nats://u:" + pw + "@h?request_timeout=" + pw,
			"nats://u:" + pw + "@h?monitor=" + pw,
			"nats://u:" + pw + "@h?creds_file=/x",
			"nats://u:" + pw + "@h:" + pw,
			"nats://u:" + pw + "@",
			"nats://:" + pw + "@h",
			"tls://u:" + pw + "@h",
			"",
		} {
			sc.OpenFails("nats", d)
		}
	})
	t.Run("failing", func(t *testing.T) {
		sc := secrettest.New(t)
		wrong := strings.Replace(server(t), "distlock-nats-test-password", pw, 1)
		for _, d := range []string{
			"nats://u:" + pw + "@" + secrettest.ClosedAddr(t) + "?request_timeout=2s",
			wrong + "?request_timeout=2s",
		} {
			sc.Use(secrettest.Elide(d), sc.Open("nats", d), secrettest.Fails)
		}
	})
}

// TestAcquire_refusedCredentialsAreMisconfigured: a wrong password, an
// unknown user and a wrong token end Acquire at once with
// lock.ErrMisconfigured, without the password.
func TestAcquire_refusedCredentialsAreMisconfigured(t *testing.T) {
	full := server(t)
	hosts := full[strings.LastIndexByte(full, '@')+1:]
	pw := "distlock-nats-test-password"
	drivertest.RefusedCredentials(t, "nats", pw, [][2]string{
		{"wrong password", "nats://distlock:wrong-" + pw + "@" + hosts},
		{"unknown user", "nats://mallory:" + pw + "@" + hosts},
		{"token", "nats://" + pw + "@" + hosts},
		{"no credentials", "nats://" + hosts},
	})
}

// TestTryAcquire_silentServerIsUnavailable points a client at a server
// that never answers: see drivertest.SilentServerIsUnavailable.
func TestTryAcquire_silentServerIsUnavailable(t *testing.T) {
	drivertest.SilentServerIsUnavailable(t, "nats", func(addr string) string {
		return "nats://" + addr + "?request_timeout=1s&dial_timeout=300ms"
	})
}
