package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distlock/lock"
)

// benchMemoryStore is the memory driver's store in bench: memory takes no
// DSN on bench's command line, and its store is the process's own anyway.
const benchMemoryStore = "distlock-bench"

// benchTarget is a backend bench measures: a driver and the DSN that
// reaches its servers.
type benchTarget struct {
	driver, dsn string
}

// benchBackends is bench's --driver and --dsn flags. Both repeat, and pair
// in order: the first --dsn goes with the first --driver other than
// memory, which takes none.
type benchBackends struct {
	drivers, dsns []string
}

// register adds the flags to c.
func (b *benchBackends) register(c *command) {
	c.fs.Func("driver", "a lock backend `D` to measure, repeatable: "+strings.Join(lock.Drivers(), ", ")+
		" (default $DISTLOCK_BENCH, else $DISTLOCK_DRIVER, else memory alone)",
		func(s string) error { b.drivers = append(b.drivers, s); return nil })
	c.fs.Func("dsn", "the `DSN` of the next --driver other than memory, repeatable (never printed)",
		func(s string) error { b.dsns = append(b.dsns, s); return nil })
}

// The places bench's backends may come from, as resolve reports them.
const (
	benchFromFlags   = "--driver and --dsn"
	benchFromList    = "$DISTLOCK_BENCH"
	benchFromOne     = "$DISTLOCK_DRIVER and $DISTLOCK_DSN"
	benchFromNowhere = "" // memory alone
)

// resolve returns the backends to measure, in the order given, and where
// they came from: the flags; else $DISTLOCK_BENCH; else $DISTLOCK_DRIVER
// and $DISTLOCK_DSN, as run and status read them; else memory alone. The
// environment is read through getenv. Its errors are usage errors, and
// never quote a DSN.
func (b *benchBackends) resolve(getenv func(string) string) ([]benchTarget, string, error) {
	switch {
	case len(b.drivers) > 0 || len(b.dsns) > 0:
		targets, err := benchPair(b.drivers, b.dsns)
		return targets, benchFromFlags, err
	case getenv("DISTLOCK_BENCH") != "":
		targets, err := benchParseList(getenv("DISTLOCK_BENCH"))
		return targets, benchFromList, err
	case getenv("DISTLOCK_DRIVER") != "":
		d, dsn := getenv("DISTLOCK_DRIVER"), getenv("DISTLOCK_DSN")
		switch err := benchCheckDriver(d, nil); {
		case err != nil:
			return nil, benchFromOne, failure(exitUsage, "$DISTLOCK_DRIVER: %v", err)
		case d == "memory":
			return []benchTarget{{driver: d, dsn: benchMemoryStore}}, benchFromOne, nil
		case dsn == "":
			return nil, benchFromOne, failure(exitUsage, "$DISTLOCK_DRIVER is %s, but $DISTLOCK_DSN is empty", d)
		}
		return []benchTarget{{driver: d, dsn: dsn}}, benchFromOne, nil
	}
	return []benchTarget{{driver: "memory", dsn: benchMemoryStore}}, benchFromNowhere, nil
}

// benchPair pairs drivers with DSNs in order, memory taking none.
func benchPair(drivers, dsns []string) ([]benchTarget, error) {
	var targets []benchTarget
	next := 0 // the next DSN to hand out
	for _, d := range drivers {
		if err := benchCheckDriver(d, targets); err != nil {
			return nil, err
		}
		if d == "memory" {
			targets = append(targets, benchTarget{driver: d, dsn: benchMemoryStore})
			continue
		}
		if next < len(dsns) {
			targets = append(targets, benchTarget{driver: d, dsn: dsns[next]})
		}
		next++
	}
	if next != len(dsns) {
		return nil, failure(exitUsage, "%d --dsn for %d --driver other than memory: give each --driver its --dsn, in the same order (memory takes none)", len(dsns), next)
	}
	for _, t := range targets {
		if t.dsn == "" {
			return nil, failure(exitUsage, "the --dsn of driver %s is empty", t.driver)
		}
	}
	return targets, nil
}

// benchParseList parses $DISTLOCK_BENCH: entries separated by ';', each
// DRIVER=DSN, or memory alone.
func benchParseList(list string) ([]benchTarget, error) {
	var targets []benchTarget
	for i, entry := range strings.Split(list, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		d, dsn, hasDSN := strings.Cut(entry, "=")
		d = strings.TrimSpace(d)
		if err := benchCheckDriver(d, targets); err != nil {
			return nil, failure(exitUsage, "$DISTLOCK_BENCH, entry %d: %v", i+1, err)
		}
		switch {
		case d == "memory" && hasDSN:
			return nil, failure(exitUsage, "$DISTLOCK_BENCH, entry %d: memory takes no DSN (write memory alone)", i+1)
		case d == "memory":
			dsn = benchMemoryStore
		case strings.TrimSpace(dsn) == "":
			return nil, failure(exitUsage, "$DISTLOCK_BENCH, entry %d: driver %s has no DSN (write %s=DSN)", i+1, d, d)
		}
		targets = append(targets, benchTarget{driver: d, dsn: strings.TrimSpace(dsn)})
	}
	if len(targets) == 0 {
		return nil, failure(exitUsage, "$DISTLOCK_BENCH names no driver (write DRIVER=DSN entries separated by ';')")
	}
	return targets, nil
}

// benchCheckDriver checks a driver's name: known, and not among those
// already named (a row per driver).
func benchCheckDriver(d string, named []benchTarget) error {
	drivers := lock.Drivers()
	switch {
	case !slices.Contains(drivers, d):
		return failure(exitUsage, "unknown driver %s (one of %s)", quoteArg(d), strings.Join(drivers, ", "))
	case slices.ContainsFunc(named, func(t benchTarget) bool { return t.driver == d }):
		return failure(exitUsage, "driver %s named twice: bench measures each driver once", d)
	}
	return nil
}

// quoteArg quotes what the user wrote where a name or an argument was
// expected, unless it looks like a DSN, which may hold a password: then it
// says so instead. Every command's error for an unknown driver uses it.
func quoteArg(s string) string {
	if strings.Contains(s, "://") || strings.Contains(s, "@") {
		return "(a DSN? give it with --dsn, after its --driver)"
	}
	return fmt.Sprintf("%q", s)
}
