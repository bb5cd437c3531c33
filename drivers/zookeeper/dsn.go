package zookeeper

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/distlock/lock/driver/dsn"
)

// DefaultDialTimeout bounds [Connector.Connect]'s wait for a session, for
// connectors opened by DSN without dial_timeout.
const DefaultDialTimeout = 5 * time.Second

// grammar is the DSN's syntax: zk://[user[:password]@]host[:port][,host[:port]...][/chroot][?params].
var grammar = dsn.Grammar{
	Scheme:      "zk",
	DefaultPort: "2181",
	Path:        true,
	Params: dsn.Params{
		{Name: "session_timeout", Kind: dsn.Duration, Min: "1ms", Default: DefaultSessionTimeout.String(), Doc: "The session's timeout, which bounds every lock's validity."},
		{Name: "request_timeout", Kind: dsn.Duration, Default: DefaultRequestTimeout.String(), Doc: "Bounds each operation across members, and Connect."},
		{Name: "member_timeout", Kind: dsn.Duration, Default: DefaultMemberTimeout.String(), Doc: "Bounds each attempt on one member before the next is tried."},
		{Name: "dial_timeout", Kind: dsn.Duration, Default: DefaultDialTimeout.String(), Doc: "Bounds Connect's wait for a session."},
		{Name: "max_sessions", Kind: dsn.Int, Min: "1", Max: "1000", Default: fmt.Sprint(DefaultMaxSessions), Doc: "Sessions a connection opens at most."},
	},
}

// settings is what a DSN describes.
type settings struct {
	hosts       []string // host:port (IPv6 in brackets)
	username    string
	password    string
	dialTimeout time.Duration
	cfg         Config
}

// parseDSN parses a DSN of [grammar]. The user name and password are the
// digest scheme's. Its errors never quote the DSN's user information.
func parseDSN(s string) (*settings, error) {
	d, err := grammar.Parse(s)
	if err != nil {
		return nil, err
	}
	if strings.Contains(d.User, ":") {
		return nil, errors.New("invalid DSN: a user name with ':' (the digest scheme splits there)")
	}
	p := d.Params
	st := &settings{
		hosts:       d.Hosts,
		username:    d.User,
		password:    d.Password,
		dialTimeout: p.Duration("dial_timeout"),
		cfg: Config{
			SessionTimeout: p.Duration("session_timeout"),
			RequestTimeout: p.Duration("request_timeout"),
			MemberTimeout:  p.Duration("member_timeout"),
			MaxSessions:    p.Int("max_sessions"),
		},
	}
	if d.Path != "" {
		root := "/" + strings.TrimSuffix(d.Path, "/")
		if err := validRoot(root); err != nil {
			return nil, fmt.Errorf("invalid DSN: chroot: %w", err)
		}
		st.cfg.Root = root
	}
	return st, nil
}

// validRoot checks a chroot: an absolute path of node names, none of them
// empty, "." or "..", and not under /zookeeper.
func validRoot(root string) error {
	if root == "/" {
		return errors.New("the root node itself is not allowed")
	}
	for i, name := range strings.Split(root[1:], "/") {
		switch {
		case name == "" || name == "." || name == "..":
			return fmt.Errorf("node name %q is not allowed", name)
		case i == 0 && name == "zookeeper":
			return errors.New("/zookeeper is the server's own")
		}
		for _, r := range name {
			if r < 0x20 || 0x7f <= r && r <= 0x9f || 0xd800 <= r && r <= 0xf8ff || 0xfff0 <= r {
				return errors.New("a node name holds a character ZooKeeper refuses")
			}
		}
	}
	return nil
}
