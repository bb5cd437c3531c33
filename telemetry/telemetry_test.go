package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func setup(t *testing.T, recordKeys bool) (*lock.Client, *lock.Client, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	obs, err := telemetry.New(telemetry.Config{TracerProvider: tp, MeterProvider: mp, Driver: "memory", RecordKeys: recordKeys})
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	c, other := lock.OpenConnector(store), lock.OpenConnector(store)
	t.Cleanup(func() { c.Close(); other.Close() })
	c.SetObserver(obs)
	return c, other, spans, reader
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string)
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func TestSpansAndMetrics(t *testing.T) {
	c, other, spans, reader := setup(t, false)
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "customer/7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.TryAcquire(ctx, "customer/7"); err == nil {
		t.Fatal("a second client took a held key")
	}
	if _, err := c.TryAcquire(ctx, "customer/7"); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "job", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}

	ended := spans.Ended()
	var names []string
	for _, s := range ended {
		names = append(names, s.Name())
	}
	want := []string{"distlock.acquire", "distlock.acquire", "distlock.release", "distlock.acquire", "distlock.release", "distlock.do"}
	if len(names) != len(want) {
		t.Fatalf("spans %v, want %v", names, want)
	}
	first, held := attrs(ended[0].Attributes()), attrs(ended[1].Attributes())
	if first["distlock.outcome"] != "acquired" || first["distlock.token"] != "1" || first["distlock.attempts"] != "1" || first["distlock.driver"] != "memory" {
		t.Errorf("first acquisition's span attributes = %v", first)
	}
	if _, raw := first["distlock.key"]; raw || len(first["distlock.key_hash"]) != 16 {
		t.Errorf("keys recorded as %v, want a 16-digit hash by default", first)
	}
	if held["distlock.outcome"] != "held" || ended[1].Status().Code == codes.Error {
		t.Errorf("a refused acquisition's span = %v, status %v; want outcome held, not an error", held, ended[1].Status())
	}
	if ended[3].Parent().SpanID() != ended[5].SpanContext().SpanID() {
		t.Error("Do's acquisition is not a child of Do's span")
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	var holds uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					o, _ := p.Attributes.Value("distlock.outcome")
					counts[m.Name+"/"+o.String()] += p.Value
				}
			case metricdata.Histogram[float64]:
				if m.Name == "distlock.hold" {
					for _, p := range d.DataPoints {
						holds += p.Count
						if p.Sum < 0.01 {
							t.Errorf("hold time sum %v s, want at least the 10ms held", p.Sum)
						}
					}
				}
			}
		}
	}
	if counts["distlock.acquisitions/acquired"] != 2 || counts["distlock.acquisitions/held"] != 1 {
		t.Errorf("acquisitions by outcome = %v, want 2 acquired, 1 held (the other client has no observer)", counts)
	}
	if holds != 2 {
		t.Errorf("%d hold times recorded, want 2", holds)
	}
}

func TestLostAndRecordKeys(t *testing.T) {
	c, _, spans, reader := setup(t, true)
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "customer/7", lock.WithTTL(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if got := attrs(spans.Ended()[0].Attributes())["distlock.key"]; got != "customer/7" {
		t.Errorf("with RecordKeys, distlock.key = %q", got)
	}
	var rm metricdata.ResourceMetrics
	reader.Collect(ctx, &rm)
	var lost int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "distlock.lost" {
				for _, p := range d.DataPoints {
					lost += p.Value
				}
			}
		}
	}
	if lost != 1 {
		t.Errorf("distlock.lost = %d, want 1", lost)
	}
}
