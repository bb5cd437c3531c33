package zookeeper

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

var _ driver.SettingsChecker = (*conn)(nil)

// CheckSettings reads the ensemble's members from /zookeeper/config (or,
// where it lists none, asks the DSN's hosts whether they run standalone)
// and learns the session timeouts it grants, which bound the TTLs the
// driver can serve, by asking for a session of 1ms and one of a day. See
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
		if s.members < 0 && cn.c.standalone(ctx) {
			s.members = 1
		}
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

// standalone reports whether a member of the DSN's hosts runs standalone,
// as a server whose configuration lists no other members does: its
// /zookeeper/config is empty. It asks each host at once with the srvr
// command (the one four-letter command ZooKeeper allows by default), each
// under the member timeout; a host that does not answer, or refuses the
// command, does not count.
func (c *Connector) standalone(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.MemberTimeout)
	defer cancel()
	found := make(chan bool, len(c.s.hosts))
	for _, h := range c.s.hosts {
		go func() { found <- srvrMode(ctx, h) == "standalone" }()
	}
	standalone := false
	for range c.s.hosts {
		standalone = <-found || standalone
	}
	return standalone
}

// srvrMode returns the mode ("standalone", "leader", "follower"...) that
// the server at addr gives in its answer to srvr, or "" if it gave none.
func srvrMode(ctx context.Context, addr string) string {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return ""
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	if _, err := io.WriteString(nc, "srvr"); err != nil {
		return ""
	}
	sc := bufio.NewScanner(io.LimitReader(nc, 4096))
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return strings.TrimSpace(mode)
		}
	}
	return ""
}
