package dsntest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/driver/dsn"
)

// fake is a driver over the shared grammar. With leak set, its errors
// quote the DSN.
type fake struct{ leak bool }

var fakeGrammar = dsn.Grammar{Scheme: "fake", DefaultPort: "1", Params: dsn.Params{{Name: "x", Kind: dsn.Bool}}}

type connector struct{ d *dsn.DSN }

func (c connector) Connect(context.Context) (driver.Conn, error) { return nil, errors.New("fake") }
func (c connector) Driver() driver.Driver                        { return fake{} }
func (c connector) String() string                               { return c.d.String() }
func (c connector) GoString() string                             { return c.d.String() }

func (f fake) OpenConnector(s string) (driver.Connector, error) {
	d, err := fakeGrammar.Parse(s)
	if err != nil {
		if f.leak {
			return nil, errors.New(err.Error() + ": " + s)
		}
		return nil, err
	}
	return connector{d}, nil
}

var seeds = Seeds{
	Scheme: "fake",
	URLs:   [][5]string{{"u", "s3cr3t-pw", "h:1", "", "x=true"}, {"u", "p@ss/w#rd?x", "h:notaport", "", ""}},
	Raw:    []string{"fake://u:pw@h,[::1]:2?x=1", "fake://[::1", ",,"},
}

func FuzzOpenConnector(f *testing.F) {
	Fuzz(f, fake{}, seeds)
}

// The check fails on a driver whose error quotes the DSN, and on a
// connector that prints its password.
func TestShows_catchesLeaks(t *testing.T) {
	password := "p@ss/w#rd?x"
	_, err := fake{leak: true}.OpenConnector("fake://u:" + strings.NewReplacer("@", "%40", "/", "%2F", "#", "%23", "?", "%3F").Replace(password) + "@h:notaport")
	if _, ok := shows(password, err, nil); !ok {
		t.Errorf("the leak of %v was not seen", err)
	}
	c, err := fake{}.OpenConnector("fake://u:" + password[:3] + "x@h")
	if err != nil {
		t.Fatal(err)
	}
	leaky := leakyConnector{c, "s3cr3t-pw"}
	if _, ok := shows("s3cr3t-pw", nil, leaky); !ok {
		t.Error("a connector that prints its password was not seen")
	}
	if _, ok := shows("s3cr3t-pw", errors.New("invalid DSN"), c); ok {
		t.Error("a clean error and connector were taken for a leak")
	}
}

type leakyConnector struct {
	driver.Connector
	password string
}

func (l leakyConnector) String() string { return "fake(" + l.password + ")" }

func TestDistinctive(t *testing.T) {
	if distinctive("short", "u") || distinctive("s3cr3t-pw", "s3cr3t-pw.example") || !distinctive("s3cr3t-pw", "u", "h") {
		t.Error("distinctive is wrong")
	}
}
