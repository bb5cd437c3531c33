package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/distlock/lock"
)

const statusAbout = `Shows who holds each KEY: the holder's ID (the first characters of its
random value, which cannot release the lock; 'distlock run' gives CMD its own
as DISTLOCK_LOCK_ID), its fencing token if the driver issues them, and the time
left on its lease by the backend's clock. Flags may come before or after the
keys. With --election, each argument names an election (lock.Election), and
status shows its leader: the term's ID, the value it campaigned with, its
token and the time left.

With --max N, each KEY names a semaphore of N permits: a line per held
permit shows its slot, and the number of permits its holder asked for.

Exit codes: 0 every key answered (held or not); 64 bad usage; 69 the backend
failed, or the driver cannot tell who holds a key.`

const statusExamples = `  distlock status --driver postgres --dsn "$PG_URL" nightly-report backup
  DISTLOCK_DRIVER=goredis DISTLOCK_DSN='redis://r1:6379,redis://r2:6379,redis://r3:6379' distlock status deploy
  distlock status --driver postgres --dsn "$PG_URL" --json deploy | jq '.[0].holder'
  distlock status --driver postgres --dsn "$PG_URL" --max 3 crawler
  distlock status --driver etcd --dsn "$ETCD_URL" --election scheduler`

// statusOptions are the parsed flags and arguments of 'distlock status'.
type statusOptions struct {
	cmd      *command
	backend  backend
	json     bool
	election bool // the arguments are elections' names
	timeout  time.Duration
	max      int // above 0: the keys name semaphores of max permits
	keys     []string
}

// keyStatus is one key's line of 'distlock status', and its JSON object.
type keyStatus struct {
	Key         string  `json:"key"`
	Held        bool    `json:"held"`
	Holder      string  `json:"holder,omitempty"`        // the holder's ID
	Value       *string `json:"value,omitempty"`         // an election's leader's value
	Token       *uint64 `json:"token,omitempty"`         // if the driver issues tokens
	ExpiresInMS *int64  `json:"expires_in_ms,omitempty"` // the holder's TTL
	Slot        *int    `json:"slot,omitempty"`          // a semaphore's: the permit's slot
	Permits     int     `json:"permits,omitempty"`       // a semaphore's: the N its holder asked for, or --max if free
}

// statusCmd runs 'distlock status'.
func statusCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseStatus(args, stdout)
	if err != nil {
		return report(stderr, "status", err)
	}
	client, err := o.backend.open(o.cmd, stderr)
	if err != nil {
		return report(stderr, "status", err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	inspect := inspectAll
	switch {
	case o.max > 0:
		inspect = o.inspectSemaphores
	case o.election:
		inspect = leadersOf
	}
	rows, failed, err := inspect(ctx, client, o.keys, stderr)
	if err != nil {
		return report(stderr, "status", err)
	}
	if failed && len(rows) == 0 {
		return exitBackend // the errors are on stderr; there is no answer to print
	}
	if err := o.print(stdout, rows); err != nil {
		return report(stderr, "status", err)
	}
	if failed {
		return exitBackend
	}
	return exitOK
}

// parseStatus parses the arguments of 'distlock status' and checks them.
func parseStatus(args []string, stdout io.Writer) (*statusOptions, error) {
	o := &statusOptions{cmd: newCommand("status",
		"distlock status --driver D --dsn S [--json] [--timeout T] [--max N | --election] KEY...", statusAbout, statusExamples)}
	o.backend.register(o.cmd)
	o.cmd.fs.BoolVar(&o.json, "json", false, "print a JSON array of objects (key, held, holder, token, expires_in_ms)")
	o.cmd.fs.BoolVar(&o.election, "election", false, "the arguments are elections: show each one's leader, with the value it campaigned with")
	o.cmd.fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on the backend after this long")
	o.cmd.fs.IntVar(&o.max, "max", 0, "the keys name semaphores of N permits: show each one's holders")
	keys, err := o.cmd.parseInterleaved(args, stdout)
	switch {
	case err != nil:
		return nil, err
	case len(keys) == 0:
		return nil, failure(exitUsage, "no keys: give one or more after the flags")
	case o.timeout <= 0:
		return nil, failure(exitUsage, "--timeout %v is not positive", o.timeout)
	case o.cmd.set("max") && (o.max < 1 || o.max > lock.MaxPermits):
		return nil, failure(exitUsage, "--max %d is outside [1, %d]", o.max, lock.MaxPermits)
	case o.max > 0 && o.election:
		return nil, failure(exitUsage, "--max and --election: give one or the other")
	}
	o.keys = keys
	return o, nil
}

// inspectAll asks who holds each key, and returns the answers. A key the
// backend failed to answer for is reported on stderr and sets failed; an
// invalid key, or a driver that cannot tell, ends it with err.
func inspectAll(ctx context.Context, c *lock.Client, keys []string, stderr io.Writer) (rows []keyStatus, failed bool, err error) {
	for _, k := range keys {
		h, held, err := c.Inspect(ctx, k)
		switch {
		case errors.Is(err, lock.ErrInvalidKey):
			return nil, false, failure(exitUsage, "%v", err)
		case errors.Is(err, errors.ErrUnsupported):
			return nil, false, failure(exitBackend, "the driver cannot tell who holds a key (it has no inspector): %v", err)
		case err != nil:
			fmt.Fprintf(stderr, "distlock: status: %v\n", err)
			failed = true
			continue
		}
		rows = append(rows, newKeyStatus(k, h, held))
	}
	return rows, failed, nil
}

func newKeyStatus(key string, h lock.Holder, held bool) keyStatus {
	s := keyStatus{Key: key, Held: held}
	if held {
		s.Holder = h.ID
		ms := h.TTL.Milliseconds()
		s.ExpiresInMS = &ms
		if h.Fenced {
			tok := uint64(h.Token)
			s.Token = &tok
		}
	}
	return s
}

// print writes rows as a table or as JSON.
func (o *statusOptions) print(w io.Writer, rows []keyStatus) error {
	if o.json {
		if rows == nil {
			rows = []keyStatus{}
		}
		return json.NewEncoder(w).Encode(rows)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if o.election {
		return printLeaders(tw, rows)
	}
	fmt.Fprintln(tw, "KEY\tHOLDER\tTOKEN\tEXPIRES IN")
	for _, r := range rows {
		key := printable(r.Key)
		if r.Slot != nil {
			key += fmt.Sprintf(" [permit %d of %d]", *r.Slot, r.Permits)
		} else if r.Permits > 0 {
			key += fmt.Sprintf(" [%d permits]", r.Permits)
		}
		holder, token, expires := "(free)", "-", "-"
		if r.Held {
			holder, expires = printable(r.Holder), formatTTL(time.Duration(*r.ExpiresInMS)*time.Millisecond)
			if r.Token != nil {
				token = strconv.FormatUint(*r.Token, 10)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", key, holder, token, expires)
	}
	return tw.Flush()
}

// printable is s, quoted if it holds spaces, control characters or quotes,
// which would break the table's columns or reach the terminal raw.
func printable(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '"' }) {
		return strconv.Quote(s)
	}
	return s
}

// formatTTL rounds a TTL for reading: to a tenth of a second from a
// second up, to the millisecond below.
func formatTTL(d time.Duration) string {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// inspectSemaphores is inspectAll for semaphores of o.max permits named
// by keys: a row per held permit, or one free row for a semaphore with
// none.
func (o *statusOptions) inspectSemaphores(ctx context.Context, c *lock.Client, keys []string, stderr io.Writer) (rows []keyStatus, failed bool, err error) {
	for _, k := range keys {
		s, err := c.Semaphore(k, o.max)
		if err != nil {
			return nil, false, failure(exitUsage, "%v", err)
		}
		hs, err := s.Holders(ctx)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return nil, false, failure(exitBackend, "the driver cannot tell who holds a key (it has no inspector): %v", err)
		case err != nil:
			fmt.Fprintf(stderr, "distlock: status: %v\n", err)
			failed = true
			continue
		}
		if len(hs) == 0 {
			rows = append(rows, keyStatus{Key: k, Permits: o.max})
		}
		for _, h := range hs {
			r := newKeyStatus(k, h.Holder, true)
			r.Slot, r.Permits = &h.Slot, h.Size
			rows = append(rows, r)
		}
	}
	return rows, failed, nil
}
