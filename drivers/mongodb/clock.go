package mongodb

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Clock measurement; see "Server time" in DESIGN.md.
const (
	// clockSamples is how many hellos a measurement takes; the one with
	// the shortest round trip wins.
	clockSamples = 3
	// clockRefresh is how often the housekeeper measures again.
	clockRefresh = 30 * time.Second
	// clockRate bounds how far apart the rates of the server's clock and
	// the client's monotonic clock may be: 1/2000 = 500 ppm.
	clockRate = 2000
	// clockResolution is hello's localTime resolution.
	clockResolution = time.Millisecond
)

// clockSample is one measurement of the server's clock: at the client's
// monotonic instant at, the server's clock read between server and
// server+rtt+clockResolution.
type clockSample struct {
	at     time.Time // the client's clock when the answer arrived (with its monotonic reading)
	server time.Time // hello's localTime
	rtt    time.Duration
}

// bounds returns the earliest and the latest time the server's clock can
// read at the client's monotonic instant t.
func (s *clockSample) bounds(t time.Time) (lo, hi time.Time) {
	d := t.Sub(s.at) // monotonic
	slack := max(d, -d) / clockRate
	lo = s.server.Add(d - slack)
	hi = s.server.Add(d + s.rtt + clockResolution + slack)
	return lo, hi
}

// serverClock is a connection's current measurement of the server's clock.
type serverClock struct {
	db     *mongo.Database // "admin"
	sample atomic.Pointer[clockSample]
}

// bounds is [clockSample.bounds] of the current measurement.
func (c *serverClock) bounds(t time.Time) (lo, hi time.Time) {
	return c.sample.Load().bounds(t)
}

// measure sends n hellos and keeps the tightest answer.
func (c *serverClock) measure(ctx context.Context, n int) error {
	var best *clockSample
	for range n {
		s, err := c.hello(ctx)
		if err != nil {
			return fmt.Errorf("measuring the server's clock: %w", err)
		}
		if best == nil || s.rtt < best.rtt {
			best = s
		}
	}
	c.sample.Store(best)
	return nil
}

func (c *serverClock) hello(ctx context.Context) (*clockSample, error) {
	t0 := time.Now()
	raw, err := c.db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Raw()
	t1 := time.Now()
	if err != nil {
		return nil, err
	}
	v, err := raw.LookupErr("localTime")
	if err != nil {
		return nil, errors.New("hello did not report localTime")
	}
	ms, ok := v.DateTimeOK()
	if !ok {
		return nil, fmt.Errorf("hello reported localTime as %s, not a date", v.Type)
	}
	return &clockSample{at: t1, server: time.UnixMilli(ms), rtt: t1.Sub(t0)}, nil
}

// ceilMillis returns t as a BSON date, rounded up to the millisecond.
func ceilMillis(t time.Time) bson.DateTime {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return bson.DateTime(ms)
}

// floorMillis returns t as a BSON date, rounded down to the millisecond.
func floorMillis(t time.Time) bson.DateTime {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).After(t) {
		ms--
	}
	return bson.DateTime(ms)
}

// age returns how long ago the current measurement was taken.
func (c *serverClock) age() time.Duration {
	return time.Since(c.sample.Load().at)
}
