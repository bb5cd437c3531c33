package etcd

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/internal/version"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var _ driver.SettingsChecker = (*conn)(nil)

// CheckSettings reads the cluster's members and each given endpoint's
// server version, and judges them. See DESIGN.md ("The settings check").
func (c *conn) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	var s clusterSettings
	err := c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		ms, err := cli.MemberList(ctx)
		if err != nil {
			return err
		}
		s.members = len(ms.Members)
		return nil
	})
	if err != nil {
		return nil, wrap(ctx, "check settings", err)
	}
	if s.versions, err = c.routes.versions(ctx); err != nil {
		return nil, wrap(ctx, "check settings", err)
	}
	return s.judge(), nil
}

// versions asks every endpoint at once for its server's version, each
// under the member timeout: a connector opened by DSN asks each member
// through its own route, a client given to New asks each of its
// endpoints. An endpoint that did not answer maps to "". It fails only
// if ctx ends or the connection is closed.
func (rs *routes) versions(ctx context.Context) (map[string]string, error) {
	type ask struct {
		r  *route
		ep string
	}
	var asks []ask
	if rs.members {
		for _, r := range rs.all {
			asks = append(asks, ask{r, r.name})
		}
	} else {
		r := rs.all[0] // every entry is the caller's client
		cli, err := r.client(ctx)
		if err != nil {
			return nil, err
		}
		for _, ep := range cli.Endpoints() {
			asks = append(asks, ask{r, ep})
		}
	}
	got := make([]string, len(asks))
	var wg sync.WaitGroup
	for i, a := range asks {
		wg.Go(func() {
			_ = rs.try(ctx, a.r, func(ctx context.Context, cli *clientv3.Client) error {
				st, err := cli.Status(ctx, a.ep)
				if err == nil {
					got[i] = st.Version
				}
				return err
			})
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if rs.ctx.Err() != nil {
		return nil, errClosed
	}
	vs := make(map[string]string, len(asks))
	for i, a := range asks {
		vs[a.ep] = got[i]
	}
	return vs, nil
}

// clusterSettings is what the settings check reads.
type clusterSettings struct {
	members  int
	versions map[string]string // by endpoint; "" if it did not answer
}

func (s clusterSettings) judge() []driver.Finding {
	var fs []driver.Finding
	for _, ep := range slices.Sorted(maps.Keys(s.versions)) { // in a stable order
		v := s.versions[ep]
		switch {
		case v == "":
			fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: "etcd-unreachable", Server: ep,
				Problem: "the endpoint did not report its version",
				Fix:     "check that it is up; the check judged the others"})
		case version.Before(v, 3, 5, 11):
			fs = append(fs, driver.Finding{Severity: driver.Error, Rule: "etcd-version", Server: ep,
				Problem: "etcd " + v + " is older than 3.5.11: a leader stalled on a slow disk or a busy CPU can revoke live leases after it stepped down (etcd-io/etcd#15247), and the key is free while its holder works",
				Fix:     "upgrade to etcd 3.5.11 or newer"})
		}
	}
	switch {
	case s.members == 1:
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: "etcd-single-member",
			Problem: "one member: when it fails, no lock can be taken or released",
			Fix:     "run 3 or 5 members"})
	case s.members > 1 && s.members%2 == 0:
		fs = append(fs, driver.Finding{Severity: driver.Warning, Rule: "etcd-even-members",
			Problem: fmt.Sprintf("%d members tolerate %d failed, as %d members would, and need one more vote", s.members, s.members/2-1, s.members-1),
			Fix:     "run an odd number of members"})
	}
	return fs
}
