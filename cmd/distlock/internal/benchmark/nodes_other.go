//go:build !unix

package benchmark

import (
	"context"
	"errors"
)

// Nodes are redis-server processes of a run's own; on this system there
// are none, since they are hung with SIGSTOP.
type Nodes struct{}

// StartNodes fails: hanging nodes takes SIGSTOP, which this system lacks.
func StartNodes(ctx context.Context, server string, base, n int) (*Nodes, error) {
	return nil, errors.New("hanging nodes takes SIGSTOP, which this system lacks")
}

// Addrs returns nil.
func (ns *Nodes) Addrs() []string { return nil }

// DSN returns "".
func (ns *Nodes) DSN() string { return "" }

// PIDs returns nil.
func (ns *Nodes) PIDs() []int { return nil }

// Hang fails.
func (ns *Nodes) Hang(i int) error { return errors.ErrUnsupported }

// Resume fails.
func (ns *Nodes) Resume(i int) error { return errors.ErrUnsupported }

// Stop does nothing.
func (ns *Nodes) Stop() error { return nil }
