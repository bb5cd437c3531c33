package postgres_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivertest"
)

// ListScratch lists the scratch tables of the current schema that begin
// with a prefix, and nothing else.
func TestListScratch(t *testing.T) {
	dsn := server(t)
	drivertest.ListScratch(t, drivertest.ScratchNamed, func(t testing.TB, ns string) driver.Conn {
		return connect(t, drivertest.WithParams(dsn, "distlock_table", ns))
	})
}

// A prefix with a schema lists that schema's tables, named with it; one
// with nothing after the schema is refused.
func TestListScratch_schema(t *testing.T) {
	dsn := server(t)
	ctx := ctxFor(t, 30*time.Second)
	var schema string
	if err := admin(t, dsn).QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	name := freshTable(t, dsn)
	c := connect(t, drivertest.WithParams(dsn, "distlock_table", name)).(driver.ScratchLister)
	got, err := c.ListScratch(ctx, schema+"."+name)
	if want := []string{schema + "." + name}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ListScratch(%q) = %q, %v; want %q", schema+"."+name, got, err, want)
	}
	if got, err := c.ListScratch(ctx, schema+"."); !errors.Is(err, driver.ErrMisconfigured) {
		t.Errorf("ListScratch(%q) = %q, %v; want an error matching driver.ErrMisconfigured", schema+".", got, err)
	}
}
