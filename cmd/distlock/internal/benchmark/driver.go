package benchmark

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/distlock/lock"
)

// measurement is one of a driver's measurements: its label and where its
// figures go.
type measurement struct {
	label string
	into  *Figures
	run   func() Figures
}

// measureDriver runs the measurements of one driver, on its client.
func measureDriver(ctx context.Context, pr probed, plan Plan, keys *Keys, nodes *Nodes, hungSkipped string, p *Progress) Row {
	row := Row{Driver: pr.Driver, Nodes: nodeCount(pr.Target)}
	d, c := plan.Duration, pr.client
	ms := []measurement{
		{"uncontended", &row.Uncontended, func() Figures { return Cycle(ctx, c, keys, "uncontended", 1, d) }},
		{"16 keys", &row.Keys16, func() Figures { return Cycle(ctx, c, keys, "16keys", KeysGoroutines, d) }},
		{"handoffs, 1 client", &row.Shared, func() Figures {
			return Handoffs(ctx, []*lock.Client{c}, keys.Next("shared"), HandoffGoroutines, plan.Hold, d)
		}},
		{"handoffs, 8 clients", &row.PerClient, func() Figures { return handoffsClients(ctx, pr.Target, keys, plan, p.Logger()) }},
	}
	if IsRedlock(pr.Driver) {
		row.Hung = &Figures{Skipped: hungSkipped}
		if nodes != nil {
			ms = append(ms, measurement{"2 of 5 nodes hung", row.Hung, func() Figures {
				return measureHung(ctx, pr.Driver, nodes, keys, d, p.Logger())
			}})
		}
	}
	for _, m := range ms {
		if ctx.Err() != nil {
			*m.into = Figures{Skipped: "interrupted"}
			continue
		}
		p.Step(pr.Driver+": "+m.label, d)
		*m.into = m.run()
		if m.into.Error != "" {
			p.Logf("%s: %s failed: %s", pr.Driver, m.label, abridge(m.into.Error))
		}
	}
	return row
}

// nodeCount returns the number of Redlock nodes of t's DSN, 1 for other
// drivers.
func nodeCount(t Target) int {
	if !IsRedlock(t.Driver) {
		return 1
	}
	return strings.Count(t.DSN, ",") + 1
}

// handoffsClients is [Handoffs] with a client per goroutine, each logging
// to log.
func handoffsClients(ctx context.Context, t Target, keys *Keys, plan Plan, log *slog.Logger) Figures {
	var clients []*lock.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for range HandoffGoroutines {
		c, err := open(ctx, t.Driver, t.DSN, log)
		if err != nil {
			return Figures{Error: "open a client: " + err.Error()}
		}
		clients = append(clients, c)
	}
	return Handoffs(ctx, clients, keys.Next("clients"), HandoffGoroutines, plan.Hold, plan.Duration)
}

// measureHung is the uncontended measurement on nodes, with the last
// HungCount of them hung, on a client that logs to log. They are resumed
// when it ends.
func measureHung(ctx context.Context, driverName string, nodes *Nodes, keys *Keys, d time.Duration, log *slog.Logger) Figures {
	c, err := open(ctx, driverName, nodes.DSN(), log)
	if err != nil {
		return Figures{Error: "open a client: " + err.Error()}
	}
	defer c.Close()
	for i := HungNodeCount - HungCount; i < HungNodeCount; i++ {
		if err := nodes.Hang(i); err != nil {
			return Figures{Error: "hang a node: " + err.Error()}
		}
		defer nodes.Resume(i)
	}
	return Cycle(ctx, c, keys, "hung", 1, d)
}
