package etcd

import (
	"context"
	"fmt"

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
		s.versions = make(map[string]string)
		for _, ep := range cli.Endpoints() {
			st, err := cli.Status(ctx, ep)
			if err != nil {
				s.versions[ep] = ""
				continue
			}
			s.versions[ep] = st.Version
		}
		return nil
	})
	if err != nil {
		return nil, wrap(ctx, "check settings", err)
	}
	return s.judge(), nil
}

// clusterSettings is what the settings check reads.
type clusterSettings struct {
	members  int
	versions map[string]string // by endpoint; "" if it did not answer
}

func (s clusterSettings) judge() []driver.Finding {
	var fs []driver.Finding
	for ep, v := range s.versions {
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
