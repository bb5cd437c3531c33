// Package telemetry reports a lock client's operations to OpenTelemetry:
// a span for each acquire, extend, release and Do, and metrics of
// acquisitions by outcome, wait and hold times, and locks lost.
//
//	obs, err := telemetry.New(telemetry.Config{Driver: "postgres"})
//	...
//	client.SetObserver(obs)
//
// Without it (the default), a client traces nothing and pays nothing.
//
// Spans are named "distlock.OP" (OP: acquire, extend, release, do) and
// carry distlock.driver, distlock.key_hash (or distlock.key, with
// Config.RecordKeys), distlock.outcome and, for acquisitions,
// distlock.attempts, distlock.wait (seconds) and distlock.token. A failed
// operation's span has status Error, unless the outcome is "held" (the key
// was held by someone else), which is no failure of the system.
//
// Metrics (instrumentation scope github.com/distlock/lock/telemetry):
//
//	distlock.acquisitions  counter, by distlock.driver and distlock.outcome
//	distlock.wait          histogram (s): from an acquisition's call to its outcome
//	distlock.hold          histogram (s): from a grant to its release
//	distlock.lost          counter, by distlock.driver: locks found lost
//
// Outcomes: acquired, held, cancelled (the context ended), closed,
// invalid (bad input), error (the backend failed), lost (Do's lock was
// lost while its function ran).
package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/distlock/lock"
)

const scope = "github.com/distlock/lock/telemetry"

// Config configures [New]. Its zero value uses OpenTelemetry's global
// providers and hashes keys.
type Config struct {
	// TracerProvider and MeterProvider receive the spans and metrics; nil
	// means otel.GetTracerProvider() and otel.GetMeterProvider().
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	// Driver is the value of the distlock.driver attribute, such as
	// "postgres".
	Driver string

	// RecordKeys records keys as they are (distlock.key). By default only
	// a hash of each key is recorded (distlock.key_hash: the first 16 hex
	// digits of its SHA-256), since keys may name customers or documents.
	RecordKeys bool
}

// An observer is a lock.Observer over OpenTelemetry.
type observer struct {
	cfg    Config
	driver attribute.KeyValue
	tracer trace.Tracer

	acquisitions, lost metric.Int64Counter
	wait, hold         metric.Float64Histogram
}

// New returns a lock.Observer that reports to cfg's providers, for
// lock.Client.SetObserver. It fails only if a provider refuses to create
// the instruments.
func New(cfg Config) (lock.Observer, error) {
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = otel.GetTracerProvider()
	}
	if cfg.MeterProvider == nil {
		cfg.MeterProvider = otel.GetMeterProvider()
	}
	o := &observer{cfg: cfg, driver: attribute.String("distlock.driver", cfg.Driver), tracer: cfg.TracerProvider.Tracer(scope)}
	m := cfg.MeterProvider.Meter(scope)
	var errs [4]error
	o.acquisitions, errs[0] = m.Int64Counter("distlock.acquisitions", metric.WithDescription("Acquisitions of locks, by outcome."))
	o.lost, errs[1] = m.Int64Counter("distlock.lost", metric.WithDescription("Locks whose holder learned they were lost."))
	o.wait, errs[2] = m.Float64Histogram("distlock.wait", metric.WithUnit("s"), metric.WithDescription("Time from an acquisition's call to its outcome."))
	o.hold, errs[3] = m.Float64Histogram("distlock.hold", metric.WithUnit("s"), metric.WithDescription("Time from a lock's grant to its release."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return o, nil
}

// Start starts the operation's span.
func (o *observer) Start(ctx context.Context, op, key string) (context.Context, func(lock.Event)) {
	ctx, span := o.tracer.Start(ctx, "distlock."+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(o.driver, o.keyAttr(key)))
	return ctx, func(ev lock.Event) { o.end(ctx, span, ev) }
}

// end records ev on span and in the metrics, and ends span.
func (o *observer) end(ctx context.Context, span trace.Span, ev lock.Event) {
	outcome := outcomeOf(ev)
	span.SetAttributes(attribute.String("distlock.outcome", outcome))
	switch ev.Op {
	case "acquire":
		span.SetAttributes(attribute.Int("distlock.attempts", ev.Attempts), attribute.Float64("distlock.wait", ev.Wait.Seconds()))
		if ev.Fenced {
			span.SetAttributes(attribute.String("distlock.token", ev.Token.String()))
		}
		attrs := metric.WithAttributes(o.driver, attribute.String("distlock.outcome", outcome))
		o.acquisitions.Add(ctx, 1, attrs)
		o.wait.Record(ctx, ev.Wait.Seconds(), attrs)
	case "release":
		if ev.Err == nil {
			o.hold.Record(ctx, ev.Held.Seconds(), metric.WithAttributes(o.driver))
		}
	}
	if ev.Err != nil && outcome != "held" {
		span.RecordError(ev.Err)
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}

// Lost counts a lost lock, and marks the current span, if any.
func (o *observer) Lost(ctx context.Context, key string, why error) {
	o.lost.Add(ctx, 1, metric.WithAttributes(o.driver))
	trace.SpanFromContext(ctx).AddEvent("distlock.lost", trace.WithAttributes(o.keyAttr(key), attribute.String("distlock.why", why.Error())))
}

func (o *observer) keyAttr(key string) attribute.KeyValue {
	if o.cfg.RecordKeys {
		return attribute.String("distlock.key", key)
	}
	sum := sha256.Sum256([]byte(key))
	return attribute.String("distlock.key_hash", hex.EncodeToString(sum[:8]))
}

// outcomeOf names an operation's outcome.
func outcomeOf(ev lock.Event) string {
	err := ev.Err
	switch {
	case err == nil && ev.Op == "acquire":
		return "acquired"
	case err == nil:
		return "ok"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	case errors.Is(err, lock.ErrNotAcquired):
		return "held"
	case errors.Is(err, lock.ErrClosed):
		return "closed"
	case errors.Is(err, lock.ErrLost):
		return "lost"
	case errors.Is(err, lock.ErrNotHeld):
		return "not_held"
	case errors.Is(err, lock.ErrInvalidKey), errors.Is(err, lock.ErrInvalidTTL), errors.Is(err, lock.ErrInvalidOption):
		return "invalid"
	}
	return "error"
}
