package mongodb

import (
	"context"
	"fmt"

	"github.com/distlock/lock/driver"
	"go.mongodb.org/mongo-driver/v2/bson"
)

var _ driver.SettingsChecker = (*conn)(nil)

// CheckSettings asks the server whether it is a replica set's member
// (hello), and judges that together with the write and read concerns the
// driver's collection uses. See DESIGN.md ("The settings check").
func (c *conn) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	var hello struct {
		SetName string `bson:"setName"`
		Msg     string `bson:"msg"`
	}
	if err := c.client.Database("admin").RunCommand(cctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return nil, fail(ctx, cctx, c.timeout, fmt.Errorf("mongodb: hello: %w", err))
	}
	s := deploymentSettings{replicaSet: hello.SetName != "", sharded: hello.Msg == "isdbgrid"}
	if wc := c.wc; wc != nil {
		if wc.W != nil { // nil leaves w to the server's default
			s.w = fmt.Sprint(wc.W)
		}
		s.journal = wc.Journal == nil || *wc.Journal
	}
	if rc := c.rc; rc != nil {
		s.readConcern = rc.Level
	}
	return s.judge(), nil
}

// deploymentSettings is what the settings check reads.
type deploymentSettings struct {
	replicaSet, sharded bool
	w                   string // the write concern's w: "majority", "1"..., or "" for the server's default
	journal             bool   // writes wait for the journal
	readConcern         string
}

func (s deploymentSettings) judge() []driver.Finding {
	var fs []driver.Finding
	add := func(rule, problem, fix string) {
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: rule, Problem: problem, Fix: fix})
	}
	if !s.replicaSet && !s.sharded {
		add("mongodb-standalone",
			"a standalone server, not a replica set: while it is down no lock can be taken, and no failover keeps the grants",
			"run a replica set of 3 or 5 members")
		return fs // the concerns below judge a replica set
	}
	if s.w != "majority" {
		add("mongodb-write-concern",
			"write concern "+wOrDefault(s.w)+": a grant acknowledged by fewer than a majority is lost on a failover, and granted again",
			"leave the driver's default (w=majority, j=true), or set w=majority in the DSN")
	} else if !s.journal {
		add("mongodb-write-concern",
			"write concern j=false: a grant acknowledged before the journal has it can be lost if the majority restarts",
			"leave the driver's default (w=majority, j=true)")
	}
	if s.readConcern != "majority" && s.readConcern != "linearizable" {
		add("mongodb-read-concern",
			"read concern "+orDefault(s.readConcern)+": a read can see a grant that a failover then rolls back",
			"leave the driver's default (majority), or readConcernLevel=linearizable")
	}
	return fs
}

// wOrDefault names the write concern's w for a finding.
func wOrDefault(w string) string {
	if w == "" {
		return "without w (the server's default, which an arbiter or setDefaultRWConcern can make w=1)"
	}
	return "w=" + w
}

func orDefault(level string) string {
	if level == "" {
		return "(the server's default, local)"
	}
	return level
}
