package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// roleTimeout bounds each question to a member about its role.
const roleTimeout = time.Second

// leader returns the index of the member of servers that leads, asking
// each at its Status, how it was chosen, and whether it leads. When none
// can tell, it is the first member.
func leader(ctx context.Context, driverName, dsn string, servers []Server) (int, string, bool) {
	if !slices.ContainsFunc(servers, func(s Server) bool { return s.Status != "" }) {
		return 0, "the first: no member has a role", false
	}
	for i, s := range servers {
		if s.Status == "" {
			continue
		}
		var lead bool
		var err error
		switch driverName {
		case "etcd":
			lead, err = etcdLeads(ctx, s.Status)
		case "zookeeper":
			lead, err = zookeeperLeads(s.Status)
		case "nats":
			var name string
			if name, err = natsLeader(ctx, s.Status, natsBucket(dsn)); err == nil {
				for j, m := range servers {
					if m.Name == name {
						return j, "the leader of the bucket's stream", true
					}
				}
				err = fmt.Errorf("leader %q is not in --servers-dir", name)
			}
		default:
			return 0, "the first: bench cannot ask this driver's members their role", false
		}
		if err == nil && lead {
			return i, "the leader", true
		}
	}
	return 0, "the first: no member told its role", false
}

// serving reports whether member s serves its cluster again, as its
// Status tells (etcd: a status; ZooKeeper: a mode; NATS: healthy); without
// a Status, whether it accepts connections.
func serving(ctx context.Context, driverName string, s Server) bool {
	if s.Status == "" {
		return listening(s.Addr)
	}
	switch driverName {
	case "etcd":
		_, err := etcdLeads(ctx, s.Status)
		return err == nil
	case "zookeeper":
		_, err := zookeeperLeads(s.Status)
		return err == nil
	case "nats":
		return get(ctx, strings.TrimSuffix(s.Status, "/")+"/healthz", nil) == nil
	}
	return listening(s.Addr)
}

// etcdLeads asks the etcd member at base (a client URL) whether it leads.
func etcdLeads(ctx context.Context, base string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, roleTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/v3/maintenance/status", strings.NewReader("{}"))
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var st struct {
		Header struct {
			MemberID string `json:"member_id"`
		} `json:"header"`
		Leader string `json:"leader"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("etcd status: %s, %v", resp.Status, err)
	}
	return st.Leader != "" && st.Leader != "0" && st.Leader == st.Header.MemberID, nil
}

// zookeeperLeads asks the ZooKeeper member at addr (host:port) whether it
// leads, with the srvr command. A member that is not in a quorum tells no
// mode, and fails.
func zookeeperLeads(addr string) (bool, error) {
	c, err := net.DialTimeout("tcp", addr, roleTimeout)
	if err != nil {
		return false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(roleTimeout))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return false, err
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return mode == "leader", nil
		}
	}
	return false, fmt.Errorf("zookeeper %s tells no mode (not serving)", addr)
}

// natsLeader asks the NATS monitoring endpoint at base for the server that
// leads the stream of bucket, else the meta leader.
func natsLeader(ctx context.Context, base, bucket string) (string, error) {
	var jsz struct {
		Meta struct {
			Leader string `json:"leader"`
		} `json:"meta_cluster"`
		Accounts []struct {
			Streams []struct {
				Name    string `json:"name"`
				Cluster struct {
					Leader string `json:"leader"`
				} `json:"cluster"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if err := get(ctx, strings.TrimSuffix(base, "/")+"/jsz?accounts=true&streams=true", &jsz); err != nil {
		return "", err
	}
	for _, a := range jsz.Accounts {
		for _, s := range a.Streams {
			if s.Name == "KV_"+bucket && s.Cluster.Leader != "" {
				return s.Cluster.Leader, nil
			}
		}
	}
	if jsz.Meta.Leader == "" {
		return "", fmt.Errorf("nats %s tells no leader", base)
	}
	return jsz.Meta.Leader, nil
}

// natsBucket returns the bucket a nats DSN names, or the driver's default.
func natsBucket(dsn string) string {
	if u, err := url.Parse(dsn); err == nil {
		if b := u.Query().Get("bucket"); b != "" {
			return b
		}
	}
	return "distlock"
}

// get fetches u, and decodes its JSON into v unless v is nil. A status
// other than 200 is an error.
func get(ctx context.Context, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, roleTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if v == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
