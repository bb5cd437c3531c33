package redlock

import "context"

var pingCmd = []any{"PING"}

// Ping succeeds if a quorum of nodes answers.
func (r *Redlock) Ping(ctx context.Context) error {
	p := &pingRound{}
	p.begin(ctx, r, p, 0)
	p.fanOut()
	if p.tally() == granted {
		return nil
	}
	return p.err("ping")
}

// pingRound is the round of one Ping: a PING to every node, where any
// answer is a yes.
type pingRound struct {
	noHooks
	round
}

// ask sends a PING.
func (p *pingRound) ask(ctx context.Context, _ int, n Node) (bool, int64, error) {
	_, err := n.Do(ctx, pingCmd)
	return err == nil, 0, err
}
