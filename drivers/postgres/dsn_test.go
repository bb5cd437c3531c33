package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/postgres"
)

const secret = "s3cr3t-Pa55"

func TestOpen_badDSN(t *testing.T) {
	cases := []struct{ name, dsn string }{
		{"badTableName", "postgres://u:" + secret + "@h/db?distlock_table=bad-name"},
		{"tableNameWithQuote", "postgres://u:" + secret + `@h/db?distlock_table=a%22b`},
		{"tableNameWithSQL", "postgres://u:" + secret + `@h/db?distlock_table=x%3Bdrop%20table%20y`},
		{"tableNameTooLong", "postgres://u:" + secret + "@h/db?distlock_table=" + strings.Repeat("t", 64)},
		{"emptyTableName", "postgres://u:" + secret + "@h/db?distlock_table="},
		{"badCreateFlag", "postgres://u:" + secret + "@h/db?distlock_create_table=maybe"},
		{"unknownParameter", "postgres://u:" + secret + "@h/db?distlock_tabel=locks"},
		{"badPort", "postgres://u:" + secret + "@h:notaport/db"},
		{"badSSLMode", "postgres://u:" + secret + "@h/db?sslmode=bogus"},
		{"badConnectTimeout", "postgres://u:" + secret + "@h/db?connect_timeout=soon"},
		{"badPoolSize", "postgres://u:" + secret + "@h/db?pool_max_conns=many"},
		{"badPercentEncoding", "postgres://u:" + secret + "@h/db?application_name=%zz"},
		{"unterminatedIPv6", "postgres://u:" + secret + "@[::1/db"},
		{"keywordValueBadPort", "host=h password=" + secret + " port=abc"},
		{"keywordValueUnterminated", "host=h password='" + secret},
		{"keywordValueNoEquals", "host=h password=" + secret + " sslmode"},
		{"keywordValueBadTable", "host=h password='" + secret + "' distlock_table='a.b.c'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lock.Open("postgres", tc.dsn)
			if err == nil {
				c.Close()
				t.Fatalf("lock.Open succeeded, want an error")
			}
			t.Logf("error: %v", err)
			if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), secret) {
				t.Errorf("the error repeats the password: %v", err)
			}
			var le *lock.Error
			if !errors.As(err, &le) || le.Op != "open" {
				t.Errorf("error %v is not a *lock.Error of op open", err)
			}
		})
	}
}

// TestOpen_goodDSN checks DSNs that parse, without contacting a server,
// and that neither the connector nor an error of a failed connection
// shows the password.
func TestOpen_goodDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2&distlock_table=app.locks&distlock_create_table=false",
		"host=127.0.0.1 port=1 sslmode=disable connect_timeout=2 password='" + secret + "' distlock_table=Locks",
		"postgresql://127.0.0.1:1/db?sslmode=disable&connect_timeout=2&password=" + secret,
	} {
		connector, err := postgres.Driver{}.OpenConnector(dsn)
		if err != nil {
			t.Errorf("OpenConnector: %v", err)
			continue
		}
		if s := fmt.Sprintf("%v %+v %#v %s", connector, connector, connector, connector); strings.Contains(s, secret) {
			t.Errorf("the connector prints the password: %s", s)
		}
		c, err := lock.Open("postgres", dsn)
		if err != nil {
			t.Errorf("lock.Open: %v", err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = c.Ping(ctx)
		cancel()
		c.Close()
		if err == nil {
			t.Errorf("Ping of a server that is not there succeeded")
		} else if strings.Contains(fmt.Sprintf("%v %+v", err, err), secret) {
			t.Errorf("the connection error repeats the password: %v", err)
		}
	}
}

func TestNew_badConfig(t *testing.T) {
	if _, err := postgres.New(nil, postgres.Config{}); err == nil {
		t.Error("New(nil) succeeded")
	}
}
