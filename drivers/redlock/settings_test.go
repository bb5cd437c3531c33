package redlock

import (
	"context"
	"errors"
	"fmt"
	"github.com/distlock/lock/drivertest"
	"slices"
	"strings"
	"testing"
)

// infoNode answers INFO with fields, and CONFIG GET appendfsync with
// appendfsync, as a RESP2 array or, if resp3, a map; any other command
// fails.
type infoNode struct {
	name        string
	fields      map[string]string
	appendfsync string
	resp3       bool
	down        bool
}

func (n *infoNode) Do(_ context.Context, args []any) (any, error) {
	if n.down {
		return nil, errors.New("dial tcp: connection refused")
	}
	switch {
	case args[0] == "INFO":
		var b strings.Builder
		b.WriteString("# Server\r\n")
		for k, v := range n.fields {
			fmt.Fprintf(&b, "%s:%s\r\n", k, v)
		}
		return b.String(), nil
	case args[0] == "CONFIG" && len(args) == 3 && args[2] == "appendfsync" && n.appendfsync != "":
		if n.resp3 {
			return map[string]any{"appendfsync": n.appendfsync}, nil
		}
		return []any{"appendfsync", n.appendfsync}, nil
	}
	return nil, fmt.Errorf("ERR unknown command %v", args[0])
}

func (n *infoNode) Subscribe(context.Context) (Subscriber, error) { return nil, errors.New("no") }
func (n *infoNode) String() string                                { return n.name }
func (n *infoNode) Close() error                                  { return nil }

// safeInfo is what a safe master says: a master of its own, AOF with
// fsync always, no eviction.
func safeInfo(runID string) map[string]string {
	return map[string]string{"redis_version": "7.0.15", "run_id": runID, "role": "master", "cluster_enabled": "0",
		"maxmemory": "0", "maxmemory_policy": "noeviction", "aof_enabled": "1"}
}

// Each rule fires on a node set up to break it, with its severity, and
// not on a safe node.
func TestCheckSettings_rules(t *testing.T) {
	with := func(runID string, kv ...string) *infoNode {
		n := &infoNode{name: "n-" + runID, fields: safeInfo(runID), appendfsync: "always"}
		for i := 0; i+1 < len(kv); i += 2 {
			n.fields[kv[i]] = kv[i+1]
		}
		return n
	}
	cases := []struct {
		name  string
		nodes []*infoNode
		want  []string // "severity rule", in any order
	}{
		{"safe", []*infoNode{with("a"), with("b"), with("c")}, nil},
		{"evicting policy with maxmemory", []*infoNode{with("a", "maxmemory", "104857600", "maxmemory_policy", "volatile-lru")}, []string{"error redis-maxmemory-policy"}},
		{"evicting policy without maxmemory", []*infoNode{with("a", "maxmemory_policy", "allkeys-lru")}, []string{"warning redis-maxmemory-policy"}},
		{"replica", []*infoNode{with("a"), with("b", "role", "slave"), with("c")}, []string{"error redis-replica"}},
		{"cluster", []*infoNode{with("a", "cluster_enabled", "1")}, []string{"warning redis-cluster"}},
		{"no persistence", []*infoNode{with("a", "aof_enabled", "0")}, []string{"warning redis-persistence"}},
		{"safe over RESP3", []*infoNode{func() *infoNode { n := with("a"); n.resp3 = true; return n }()}, nil},
		{"fsync everysec over RESP3", []*infoNode{func() *infoNode { n := with("a"); n.appendfsync, n.resp3 = "everysec", true; return n }()}, []string{"warning redis-appendfsync"}},
		{"fsync everysec", []*infoNode{func() *infoNode { n := with("a"); n.appendfsync = "everysec"; return n }()}, []string{"warning redis-appendfsync"}},
		{"appendfsync unreadable", []*infoNode{func() *infoNode { n := with("a"); n.appendfsync = ""; return n }()}, []string{"warning redis-appendfsync"}},
		{"old version", []*infoNode{with("a", "redis_version", "2.6.11")}, []string{"error redis-version"}},
		{"same server twice", []*infoNode{with("a"), with("b"), {name: "alias-of-a", fields: safeInfo("a"), appendfsync: "always"}}, []string{"error redis-same-server"}},
		{"even n", []*infoNode{with("a"), with("b"), with("c"), with("d")}, []string{"warning redlock-even-n"}},
		{"one node down", []*infoNode{with("a"), {name: "down", down: true}, with("c")}, []string{"warning redis-unreachable"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nodes := make([]Node, len(c.nodes))
			for i, n := range c.nodes {
				nodes[i] = n
			}
			r, err := New(nodes)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			fs, err := r.CheckSettings(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := drivertest.Findings(t, fs)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) {
				t.Errorf("findings %q, want %q\n%v", got, want, fs)
			}
		})
	}
}

// With no node answering, the check fails instead of finding nothing.
func TestCheckSettings_noNodeAnswers(t *testing.T) {
	r, err := New([]Node{&infoNode{name: "a", down: true}, &infoNode{name: "b", down: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if fs, err := r.CheckSettings(context.Background()); err == nil {
		t.Fatalf("CheckSettings = %v, nil; want an error", fs)
	}
}
