package zookeeper

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

var _ driver.SettingsChecker = (*conn)(nil)

// CheckSettings reads the ensemble's members from /zookeeper/config and
// learns the session timeouts it grants, which bound the TTLs the driver
// can serve, by asking for a session of 1ms and one of a day. See
// DESIGN.md ("The settings check").
func (cn *conn) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	config, err := retry(ctx, func() (string, error) {
		data, _, err := cn.base.zc.Get("/zookeeper/config")
		return string(data), err
	})
	if err != nil {
		return nil, wrap(caller, "check settings", err)
	}
	s := ensembleSettings{members: -1, defaultTTL: lock.DefaultTTL}
	if n := strings.Count("\n"+config, "\nserver."); n > 0 {
		s.members = n
	}
	if cn.base.owned { // a connection given to New has no hosts to dial
		if s.minTTL, err = cn.c.negotiate(ctx, time.Millisecond); err != nil {
			return nil, wrap(caller, "check settings: opening a session", err)
		}
		if s.maxTTL, err = cn.c.negotiate(ctx, 24*time.Hour); err != nil {
			return nil, wrap(caller, "check settings: opening a session", err)
		}
	}
	return s.judge(), nil
}

// ensembleSettings is what the settings check reads.
type ensembleSettings struct {
	members        int           // voting and observing members listed; -1 if the config does not say
	minTTL, maxTTL time.Duration // the session timeouts granted; 0 if not learnt
	defaultTTL     time.Duration
}

func (s ensembleSettings) judge() []driver.Finding {
	var fs []driver.Finding
	add := func(rule, problem, fix string) {
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: rule, Problem: problem, Fix: fix})
	}
	switch {
	case s.members == 1:
		add("zookeeper-single-member", "one member: when it fails, no lock can be taken or released",
			"run 3 or 5 members")
	case s.members > 1 && s.members%2 == 0:
		add("zookeeper-even-members",
			fmt.Sprintf("%d members tolerate %d failed, as %d members would", s.members, s.members/2-1, s.members-1),
			"run an odd number of members")
	}
	if s.maxTTL > 0 && (s.defaultTTL < s.minTTL || s.defaultTTL > s.maxTTL) {
		add("zookeeper-ttl-bounds",
			fmt.Sprintf("the ensemble grants session timeouts from %v to %v only, and a lock's TTL is its session's timeout: the default TTL of %v fails with ErrSessionTimeout", s.minTTL, s.maxTTL, s.defaultTTL),
			fmt.Sprintf("give locks a TTL from %v to %v (lock.WithTTL), or widen minSessionTimeout and maxSessionTimeout", s.minTTL, s.maxTTL))
	}
	return fs
}
