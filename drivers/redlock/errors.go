package redlock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distlock/lock/driver"
)

// NodeError is the failure of one node in a round.
type NodeError struct {
	Node string // the node's address
	Err  error
}

// Error names the node and its failure.
func (e *NodeError) Error() string { return e.Node + ": " + e.Err.Error() }

// Unwrap returns the node's failure.
func (e *NodeError) Unwrap() error { return e.Err }

// Is reports whether the node's failure is a misconfiguration (see
// misconfigured), for target [driver.ErrMisconfigured]: so a
// [QuorumError] matches it if one of its nodes failed that way.
func (e *NodeError) Is(target error) bool {
	return target == driver.ErrMisconfigured && misconfigured(e.Err)
}

// refusals are the beginnings of the replies with which Redis refuses a
// client's credentials or rights: a wrong user or password (WRONGPASS; ERR
// invalid password before Redis 6), none where one is required (NOAUTH),
// one where none is set (ERR AUTH ... called without any password
// configured; ERR Client sent AUTH before Redis 6), a user without the
// rights to the commands or keys (NOPERM).
var refusals = []string{"WRONGPASS", "NOAUTH", "NOPERM", "ERR AUTH ", "ERR invalid password", "ERR Client sent AUTH"}

// misconfigured reports whether err, a node's failure, is one that
// retrying cannot fix: the node refused the credentials or rights (see
// refusals), a host name does not resolve, or the TLS handshake failed on
// a certificate or on a protocol mismatch. The Redis drivers mark
// mismatches that they recognize themselves with driver.ErrMisconfigured.
func misconfigured(err error) bool {
	if driver.IsMisconfigured(err) {
		return true
	}
	msg := err.Error()
	for _, r := range refusals {
		if strings.HasPrefix(msg, r) {
			return true
		}
	}
	return false
}

// QuorumError reports a round that could not reach a quorum, either way,
// because too many nodes failed or did not answer: it is never a sign that
// someone else holds the key. Errs holds the failed nodes' errors (of type
// *NodeError), reachable through errors.Is and errors.As.
type QuorumError struct {
	Op     string // "acquire", "fence", "extend", "release"
	Nodes  int    // nodes in all
	Quorum int    // yes answers needed
	Yes    int    // nodes that said yes before the round ended
	No     int    // nodes that said no
	Errs   []error
}

// Error tells the operation, the counts and each failed node's error.
func (e *QuorumError) Error() string {
	var b strings.Builder
	what := "unavailable"
	if errors.Is(e, driver.ErrMisconfigured) {
		what = "misconfigured"
	}
	fmt.Fprintf(&b, "redlock %s: nodes %s: %d of %d nodes failed, %d agreed, %d refused (a quorum is %d)",
		e.Op, what, len(e.Errs), e.Nodes, e.Yes, e.No, e.Quorum)
	for _, err := range e.Errs {
		b.WriteString("; ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the nodes' errors.
func (e *QuorumError) Unwrap() []error { return e.Errs }

// Is reports whether target is [driver.ErrUnavailable], which every
// QuorumError matches. One whose nodes refused the client's credentials,
// TLS settings or host names matches [driver.ErrMisconfigured] as well,
// through their errors.
func (e *QuorumError) Is(target error) bool { return target == driver.ErrUnavailable }
