package lock_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// checkingConn has a settings check that finds fs, or fails with err.
type checkingConn struct {
	*scriptedConn
	fs  []driver.Finding
	err error
}

func (c checkingConn) CheckSettings(context.Context) ([]driver.Finding, error) { return c.fs, c.err }

// CheckSettings returns the driver's findings, errors first, keeping the
// driver's order within a severity; a driver's failure is an error.
func TestCheckSettings_errorsFirst(t *testing.T) {
	fs := []driver.Finding{
		{Severity: driver.Warning, Rule: "w1"}, {Severity: driver.Error, Rule: "e1"},
		{Severity: driver.Warning, Rule: "w2"}, {Severity: driver.Error, Rule: "e2"},
	}
	c := lock.OpenConnector(&scriptedConnector{conn: checkingConn{scriptedConn: &scriptedConn{}, fs: fs}})
	defer c.Close()
	got, err := c.CheckSettings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, f := range got {
		rules = append(rules, f.Rule)
	}
	if want := []string{"e1", "e2", "w1", "w2"}; !slices.Equal(rules, want) {
		t.Errorf("rules %q, want %q", rules, want)
	}

	broken := errors.New("no node answered")
	c2 := lock.OpenConnector(&scriptedConnector{conn: checkingConn{scriptedConn: &scriptedConn{}, err: broken}})
	defer c2.Close()
	if _, err := c2.CheckSettings(context.Background()); !errors.Is(err, broken) {
		t.Errorf("CheckSettings = %v, want an error wrapping %v", err, broken)
	}
}

// A driver without a settings check says so, as ErrUnsupported.
func TestCheckSettings_unsupported(t *testing.T) {
	c := lock.OpenConnector(&scriptedConnector{conn: &scriptedConn{}})
	defer c.Close()
	if _, err := c.CheckSettings(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("CheckSettings = %v, want ErrUnsupported", err)
	}
	c.Close()
	if _, err := c.CheckSettings(context.Background()); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("CheckSettings after Close = %v, want ErrClosed", err)
	}
}
