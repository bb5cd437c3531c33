package mongodb_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
)

// withCredentials returns uri with user u and password pw.
func withCredentials(t *testing.T, uri, u, pw string) string {
	t.Helper()
	p, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.UserPassword(u, pw)
	return p.String()
}

// TestSecrets_neverPrinted puts a password in DSNs and clients and checks
// that it shows in nothing the driver and the lock.Client print, return or
// log, whether the server answers (FerretDB takes any PLAIN credentials),
// refuses the credentials (it does not support SCRAM) or cannot be
// reached.
func TestSecrets_neverPrinted(t *testing.T) {
	plain := server(t)
	pw := secrettest.Password
	// FerretDB, without authentication, accepts any PLAIN credentials.
	accepted := drivertest.WithParams(withCredentials(t, plain, "u", pw), "authMechanism", "PLAIN")
	srv, err := url.Parse(plain)
	if err != nil {
		t.Fatal(err)
	}
	closed := secrettest.ClosedAddr(t)

	t.Run("printed", func(t *testing.T) {
		sc := secrettest.New(t)
		coll := freshCollection(t, plain)
		connector, err := mongodb.Driver{}.OpenConnector(drivertest.WithParams(accepted, "distlock_database", testDB, "distlock_collection", coll))
		sc.Connector("the connector of Driver.OpenConnector", connector, err)

		client, err := mongo.Connect(options.Client().ApplyURI(accepted))
		if err != nil {
			t.Fatalf("mongo.Connect: %s", secrettest.Elide(err.Error()))
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			client.Disconnect(ctx)
		}()
		cfg := mongodb.Config{Database: testDB, Collection: coll}
		sc.Printed("a Config", cfg)
		connector, err = mongodb.New(client, cfg)
		sc.UseConnector("the connector of New", connector, err, secrettest.Answers)
	})

	t.Run("accepted", func(t *testing.T) {
		sc := secrettest.New(t)
		dsn := drivertest.WithParams(accepted, "distlock_database", testDB, "distlock_collection", freshCollection(t, plain))
		sc.Use("a client of lock.Open", sc.Open("mongodb", dsn), secrettest.Answers)
	})

	t.Run("malformedDSN", func(t *testing.T) {
		sc := secrettest.New(t)
		h := srv.Host
		for _, d := range []string{
			"",
			"mongodb+srv://u:" + pw + "@" + h + "/db",
			"http://u:" + pw + "@" + h + "/db",
			"mongodb://u:" + pw + "/x@" + h + "/db", // a '/' in the password
			"mongodb://u@" + pw + "@" + h + "/db",   // an '@' in the user information
			"mongodb://u:" + pw + "%zz@" + h + "/db",
			"mongodb://u:" + pw + "@127.0.0.1:27x17/db",
			"mongodb://u:" + pw + "@127.0.0.1:99999/db",
			"mongodb://u:" + pw + "@" + h + "/db?authSource=",
			"mongodb://u:" + pw + "@" + h + "/db?authMechanism=BOGUS",
			"mongodb://u:" + pw + "@" + h + "/db?authMechanism=MONGODB-X509",
			"mongodb://u:" + pw + "@" + h + "/db?authMechanismProperties=" + pw,
			"mongodb://u:" + pw + "@" + h + "/db?connectTimeoutMS=" + pw,
			"mongodb://u:" + pw + "@" + h + "/db?tlsCertificateKeyFile=/nonexistent&tlsCertificateKeyFilePassword=" + pw,
			"mongodb://u:" + pw + "@" + h + "/db?distlock_prune=maybe",
			"mongodb://u:" + pw + "@" + h + "/db?distlock_collection=",
			"mongodb://u:" + pw + "@" + h + "/db?distlock_request_timeout=" + pw,
			"mongodb://u:" + pw + "@" + h + "/db?distlock_bogus=1",
			"mongodb://u:" + pw + "@" + h + "/db?distlock_database=%zz",
			"mongodb://u:" + pw + "@" + h + "/db\x00",
		} {
			sc.OpenFails("mongodb", d)
		}
	})

	t.Run("failing", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, d := range []string{
			"mongodb://u:" + pw + "@" + closed + "/?serverSelectionTimeoutMS=500&connectTimeoutMS=500",                                      // nothing listens
			drivertest.WithParams(withCredentials(t, plain, "u", pw), "serverSelectionTimeoutMS", "2000"),                                   // SCRAM, which FerretDB refuses
			drivertest.WithParams(withCredentials(t, plain, "u", pw), "authMechanism", "SCRAM-SHA-256", "serverSelectionTimeoutMS", "2000"), // the same
		} {
			sc.Use(secrettest.Elide(d), sc.Open("mongodb", d), secrettest.Fails)
		}
	})
}
