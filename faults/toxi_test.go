package faults_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// link is a toxiproxy proxy in front of one server, on 127.0.0.1.
type link struct {
	p *toxiproxy.Proxy
}

// proxy starts a proxy to upstream (host:port) on a free port of
// 127.0.0.1, stopped when the test ends.
func proxy(t testing.TB, name, upstream string) *link {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatalf("toxiproxy %s -> %s: %v", name, upstream, err)
	}
	t.Cleanup(p.Stop)
	return &link{p: p}
}

// addr is where clients connect to reach the server through the link.
func (l *link) addr() string { return l.p.Listen }

// delay adds rtt to the link's round trip: half on each direction.
func (l *link) delay(t testing.TB, rtt time.Duration) {
	t.Helper()
	half := rtt.Milliseconds() / 2
	for _, stream := range []string{"upstream", "downstream"} {
		body := fmt.Sprintf(`{"name":"latency_%s","type":"latency","stream":%q,"attributes":{"latency":%d,"jitter":0}}`, stream, stream, half)
		if _, err := l.p.Toxics.AddToxicJson(bytes.NewBufferString(body)); err != nil {
			t.Fatalf("toxiproxy %s: adding latency: %v", l.p.Name, err)
		}
	}
}

// toxic adds a toxic to the link for d, then removes it.
func (l *link) toxic(t testing.TB, typ string, attrs string, d time.Duration) {
	t.Helper()
	name := typ + "_nemesis"
	body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":"downstream","attributes":%s}`, name, typ, attrs)
	if _, err := l.p.Toxics.AddToxicJson(bytes.NewBufferString(body)); err != nil {
		t.Fatalf("toxiproxy %s: adding %s: %v", l.p.Name, typ, err)
	}
	time.Sleep(d)
	if err := l.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		t.Fatalf("toxiproxy %s: removing %s: %v", l.p.Name, typ, err)
	}
}
