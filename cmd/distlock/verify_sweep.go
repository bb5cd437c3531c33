package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/distlock/lock/driver"
)

// aliveKey is the lock a contention run holds in its scratch namespace
// from its start to its end, kept alive by extensions.
const aliveKey = "verify/alive"

// runNameRE matches a run's name (see randomRunName), and captures its
// start time.
var runNameRE = regexp.MustCompile(`^([0-9a-f]{1,16})_[0-9a-f]{8}$`)

// scratchListPrefix is the prefix that every scratch namespace of verify
// on driver d begins with, in the form its driver.ScratchLister lists
// (see verifyNamespaced).
func scratchListPrefix(d string) string {
	switch d {
	case "etcd", "goredis", "redigo", "rueidis", "valkey":
		return "distlock-verify/"
	case "zookeeper":
		return "/distlock-verify-"
	}
	return "distlock_verify_"
}

// scratchRun returns the run that named the scratch namespace name, as
// listed for driver d, and when it began; false for a name that no run of
// verify gives.
func scratchRun(d, name string) (run string, began time.Time, ok bool) {
	run, ok = strings.CutPrefix(name, scratchListPrefix(d))
	if !ok {
		return "", time.Time{}, false
	}
	run = strings.TrimSuffix(run, "/")
	m := runNameRE.FindStringSubmatch(run)
	if m == nil {
		return "", time.Time{}, false
	}
	secs, err := strconv.ParseInt(m[1], 16, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	return run, time.Unix(secs, 0), true
}

// sweep drops the scratch namespaces that earlier runs left in the
// backend (a run killed by SIGKILL cannot drop its own), and returns what
// it dropped. A namespace is stale once its run began over c.sweepAfter
// ago and nobody holds its alive lock, which its run keeps alive while it
// lives: a run that began less than that ago may still be making its
// namespace, and one that holds the lock is still running. It touches
// only namespaces whose names a run of verify gives, and does nothing
// where the driver cannot list them (driver.ScratchLister) or drop them.
func (c contention) sweep(ctx context.Context, conn driver.Conn, own string) (swept []string, err error) {
	lister, ok := conn.(driver.ScratchLister)
	if !ok {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	names, err := lister.ListScratch(ctx, scratchListPrefix(c.driver))
	if err != nil {
		return nil, fmt.Errorf("listing the scratch namespaces of earlier runs: %w", err)
	}
	var errs []error
	for _, name := range names {
		run, began, ok := scratchRun(c.driver, name)
		if !ok || run == own || time.Since(began) < c.sweepAfter {
			continue
		}
		what, err := c.sweepOne(ctx, run)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		if what != "" {
			swept = append(swept, what)
		}
	}
	return swept, errors.Join(errs...)
}

// sweepOne drops the namespace of run if nobody holds its alive lock, and
// returns what it dropped ("" if it dropped nothing).
func (c contention) sweepOne(ctx context.Context, run string) (string, error) {
	ns, err := verifyNamespaced(c.driver, c.dsn, run)
	if err != nil {
		return "", err
	}
	connector, err := c.open(c.driver, ns.dsn, nil)
	if err != nil {
		return "", err
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	insp, ok := conn.(driver.Inspector)
	if !ok {
		return "", nil // nothing says the run is over
	}
	if _, held, err := insp.Inspect(ctx, aliveKey); err != nil || held {
		return "", err
	}
	d, ok := conn.(driver.Dropper)
	if !ok {
		return "", nil
	}
	if err := d.Drop(ctx); err != nil {
		return "", err
	}
	return ns.what, nil
}
