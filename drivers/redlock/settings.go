package redlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/internal/version"
)

var _ driver.SettingsChecker = (*Redlock)(nil)

// settingsTimeout bounds each node's answers to the settings check, within
// the caller's deadline.
const settingsTimeout = 2 * time.Second

// CheckSettings reads INFO (and, with AOF on, CONFIG GET appendfsync) from
// every node at once and judges what the nodes say against what Redlock
// needs: independent masters, each given once, that never evict a lock key
// and, ideally, do not forget grants on a restart. A node that does not
// answer is a finding; the check fails only if none answers. See DESIGN.md
// ("The settings check") for the rules.
func (r *Redlock) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	infos := make([]nodeInfo, len(r.nodes))
	var wg sync.WaitGroup
	for i, n := range r.nodes {
		wg.Go(func() { infos[i] = readInfo(ctx, n) })
	}
	wg.Wait()

	var fs []driver.Finding
	answered := 0
	byRunID := make(map[string]string)
	for i, in := range infos {
		name := r.nodes[i].String()
		if in.err != nil {
			fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: "redis-unreachable", Server: name,
				Problem: "the node did not answer the settings check: " + in.err.Error(),
				Fix:     "check that it is up and reachable; the other nodes were judged without it"})
			continue
		}
		answered++
		fs = append(fs, judgeNode(name, in)...)
		if id := in.get("run_id"); id != "" {
			if first, ok := byRunID[id]; ok {
				fs = append(fs, driver.Finding{Severity: driver.Error, Rule: "redis-same-server", Server: name,
					Problem: fmt.Sprintf("the same server as %s (run_id %s): it votes twice, so a quorum counts fewer independent servers than it should", first, id),
					Fix:     "give each server once, by one address"})
			} else {
				byRunID[id] = name
			}
		}
	}
	if answered == 0 {
		return nil, fmt.Errorf("redlock: check settings: no node answered: %w", errors.Join(errsOf(infos)...))
	}
	if n := len(r.nodes); n > 1 && n%2 == 0 {
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: "redlock-even-n",
			Problem: fmt.Sprintf("%d nodes need %d for a quorum, and tolerate %d failed, as %d nodes would", n, n/2+1, n/2-1, n-1),
			Fix:     fmt.Sprintf("use an odd number of nodes, such as %d", n+1)})
	}
	return fs, nil
}

func errsOf(infos []nodeInfo) []error {
	var errs []error
	for _, in := range infos {
		errs = append(errs, in.err)
	}
	return errs
}

// nodeInfo is what a node said of itself.
type nodeInfo struct {
	fields      map[string]string // INFO's "name:value" lines
	appendfsync string            // CONFIG GET appendfsync, with AOF on
	configErr   error             // why appendfsync could not be read
	err         error             // INFO failed
}

func (in nodeInfo) get(name string) string { return in.fields[name] }

// readInfo asks n for INFO and, if AOF is on, for appendfsync.
func readInfo(ctx context.Context, n Node) nodeInfo {
	ctx, cancel := context.WithTimeout(ctx, settingsTimeout)
	defer cancel()
	reply, err := n.Do(ctx, []any{"INFO"})
	if err != nil {
		return nodeInfo{err: err}
	}
	text, ok := reply.(string)
	if !ok {
		return nodeInfo{err: fmt.Errorf("INFO answered a %T, not text", reply)}
	}
	in := nodeInfo{fields: parseInfo(text)}
	if in.get("aof_enabled") == "1" {
		reply, err := n.Do(ctx, []any{"CONFIG", "GET", "appendfsync"})
		if v, ok := configValue(reply, "appendfsync"); err == nil && ok {
			in.appendfsync = v
		} else if err != nil {
			in.configErr = err
		} else {
			in.configErr = fmt.Errorf("CONFIG GET answered %v", reply)
		}
	}
	return in
}

// configValue returns the value of name in CONFIG GET name's reply: a
// name-value array over RESP2, a map over RESP3 (go-redis and rueidis
// speak RESP3 to Redis 6 and newer, and hand the map on).
func configValue(reply any, name string) (string, bool) {
	switch r := reply.(type) {
	case []any:
		if len(r) == 2 && r[0] == name {
			v, ok := r[1].(string)
			return v, ok
		}
	case map[string]any:
		v, ok := r[name].(string)
		return v, ok
	case map[any]any:
		v, ok := r[name].(string)
		return v, ok
	}
	return "", false
}

// parseInfo reads INFO's text: "# Section" lines, and "name:value" lines.
func parseInfo(text string) map[string]string {
	m := make(map[string]string)
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if name, value, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			m[name] = value
		}
	}
	return m
}

// judgeNode applies the rules of one node.
func judgeNode(name string, in nodeInfo) []driver.Finding {
	var fs []driver.Finding
	add := func(sev driver.Severity, rule, problem, fix string) {
		fs = append(fs, driver.Finding{Severity: sev, Rule: rule, Server: name, Problem: problem, Fix: fix})
	}
	if v := in.get("redis_version"); v != "" && version.Before(v, 2, 6, 12) {
		add(driver.Error, "redis-version", "Redis "+v+" has no SET with NX and PX, which every acquisition sends",
			"upgrade to a supported Redis (7 or newer)")
	}
	if role := in.get("role"); role != "" && role != "master" {
		add(driver.Error, "redis-replica",
			"a replica given as a Redlock node: it refuses or forgets lock writes, and its master decides what it holds",
			"give masters only, each an independent server")
	}
	if in.get("cluster_enabled") == "1" {
		add(driver.Warning, "redis-cluster",
			"a Redis Cluster given as one node: a failover to a replica that missed a grant grants the lock again",
			"give independent masters that are not in a cluster, or accept the failover risk (see the redlock package doc)")
	}
	if policy := in.get("maxmemory_policy"); policy != "" && policy != "noeviction" {
		if maxmem, _ := strconv.ParseInt(in.get("maxmemory"), 10, 64); maxmem > 0 {
			add(driver.Error, "redis-maxmemory-policy",
				"maxmemory-policy "+policy+" with a maxmemory set: under memory pressure the node evicts lock keys (they have TTLs), and the lock is free while its holder works",
				"set maxmemory-policy noeviction: a full node then refuses new locks instead")
		} else {
			add(driver.Warning, "redis-maxmemory-policy",
				"maxmemory-policy "+policy+": the node would evict lock keys as soon as a maxmemory is set",
				"set maxmemory-policy noeviction")
		}
	}
	switch {
	case in.get("aof_enabled") != "1":
		add(driver.Warning, "redis-persistence",
			"append-only file off: a restart forgets the locks the node granted, and it may grant them again at once",
			"set appendonly yes with appendfsync always, or keep a restarted node out for a TTL (Redlock's delayed restart)")
	case in.configErr != nil:
		add(driver.Warning, "redis-appendfsync",
			"could not read appendfsync ("+in.configErr.Error()+"): a setting other than always forgets the latest grants on a power loss",
			"make sure appendfsync is always")
	case in.appendfsync != "always":
		add(driver.Warning, "redis-appendfsync",
			"appendfsync "+in.appendfsync+": a power loss forgets the grants of up to the last second, and the node may grant them again",
			"set appendfsync always, or keep a restarted node out for a TTL")
	}
	return fs
}
