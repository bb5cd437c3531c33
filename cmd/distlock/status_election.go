package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/distlock/lock"
)

// leadersOf asks who leads each election, as inspectAll asks who holds
// each key.
func leadersOf(ctx context.Context, c *lock.Client, names []string, stderr io.Writer) (rows []keyStatus, failed bool, err error) {
	for _, name := range names {
		e, err := c.Election(name)
		if err != nil {
			return nil, false, failure(exitUsage, "%v", err)
		}
		ld, ok, err := e.Leader(ctx)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return nil, false, failure(exitBackend, "the driver cannot tell who holds a key (it has no inspector): %v", err)
		case err != nil:
			fmt.Fprintf(stderr, "distlock: status: %v\n", err)
			failed = true
			continue
		}
		rows = append(rows, leaderStatus(name, ld, ok))
	}
	return rows, failed, nil
}

func leaderStatus(name string, ld lock.Leader, ok bool) keyStatus {
	s := keyStatus{Key: name, Held: ok}
	if ok {
		s.Holder, s.Value = ld.ID, &ld.Value
		ms := ld.TTL.Milliseconds()
		s.ExpiresInMS = &ms
		if ld.Fenced {
			tok := uint64(ld.Token)
			s.Token = &tok
		}
	}
	return s
}

// printLeaders writes the elections' rows as a table.
func printLeaders(tw *tabwriter.Writer, rows []keyStatus) error {
	fmt.Fprintln(tw, "ELECTION\tLEADER\tVALUE\tTOKEN\tEXPIRES IN")
	for _, r := range rows {
		leader, value, token, expires := "(none)", "-", "-", "-"
		if r.Held {
			leader, value = printable(r.Holder), printable(*r.Value)
			expires = formatTTL(time.Duration(*r.ExpiresInMS) * time.Millisecond)
			if r.Token != nil {
				token = strconv.FormatUint(*r.Token, 10)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", printable(r.Key), leader, value, token, expires)
	}
	return tw.Flush()
}
