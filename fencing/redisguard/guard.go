package redisguard

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/fencing"
)

// DefaultPrefix is the prefix of fence keys when [Config] names none.
const DefaultPrefix = "distlock:fence:"

// Config is a guard's configuration, for [New]. Its zero value asks for
// the defaults.
type Config struct {
	// Prefix begins every fence key; see [Guard.FenceKey]. Empty means
	// [DefaultPrefix]. A '{' in it would make the hash tag the prefix's,
	// not the resource's.
	Prefix string
}

// Guard admits fencing tokens against fences kept in Redis, and makes the
// writes they protect in the same script call. It is safe for concurrent
// use.
type Guard struct {
	client redis.Scripter
	prefix string
}

// New returns a guard that keeps its fences through client: a
// *redis.Client, a *redis.ClusterClient, a *redis.Ring or anything else
// that runs scripts. It does not contact the server.
func New(client redis.Scripter, cfg Config) *Guard {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	return &Guard{client: client, prefix: cfg.Prefix}
}

// FenceKey returns the key of resource's fence: the prefix, then resource
// in braces, its hash tag.
func (g *Guard) FenceKey(resource string) string {
	return g.prefix + "{" + resource + "}"
}

// Admit makes token the newest admitted for resource, unless a newer one
// was: then it returns a [*fencing.StaleError] naming the newest. Equal
// tokens are admitted. A zero token is refused with an error matching
// [fencing.ErrNoToken], without a round trip.
func (g *Guard) Admit(ctx context.Context, resource string, token fencing.Token) error {
	return g.run(ctx, resource, token, nil, "admit")
}

// Set is Admit, and, if token is admitted, SET key value, in one atomic
// step; a stale token writes nothing. Like SET, it replaces key's value
// whatever its type, and drops its expiry.
func (g *Guard) Set(ctx context.Context, resource string, token fencing.Token, key, value string) error {
	return g.run(ctx, resource, token, []string{key}, "set", value)
}

// HSet is Admit, and, if token is admitted, HSET key with fieldValues
// (field, value, field, value...), in one atomic step; a stale token
// writes nothing. A key that is not a hash fails with WRONGTYPE, and
// neither it nor the fence changes.
func (g *Guard) HSet(ctx context.Context, resource string, token fencing.Token, key string, fieldValues ...string) error {
	if len(fieldValues) == 0 || len(fieldValues)%2 != 0 {
		return fmt.Errorf("redisguard: HSet of %q for %q: %d field and value arguments, want pairs", key, resource, len(fieldValues))
	}
	args := make([]any, 1, 1+len(fieldValues))
	args[0] = "hset"
	for _, s := range fieldValues {
		args = append(args, s)
	}
	return g.run(ctx, resource, token, []string{key}, args...)
}

// run runs admitScript with the fence of resource and keys, token and
// args (the write), and turns its reply into an error.
func (g *Guard) run(ctx context.Context, resource string, token fencing.Token, keys []string, args ...any) error {
	if token.IsZero() {
		return fmt.Errorf("redisguard: %w for %q", fencing.ErrNoToken, resource)
	}
	keys = append([]string{g.FenceKey(resource)}, keys...)
	reply, err := admitScript.Run(ctx, g.client, keys, append([]any{token.String()}, args...)...).Slice()
	if err != nil {
		return fmt.Errorf("redisguard: %s of token %s for %q: %w", args[0], token, resource, err)
	}
	newest, err := parseReply(reply, token)
	if err != nil {
		return fmt.Errorf("redisguard: %s of token %s for %q: %w", args[0], token, resource, err)
	}
	if newest != 0 {
		return &fencing.StaleError{Resource: resource, Token: token, Newest: newest}
	}
	return nil
}

// parseReply returns the newest token of a refusal of token, and 0 for an
// admission.
func parseReply(reply []any, token fencing.Token) (fencing.Token, error) {
	if len(reply) == 1 && reply[0] == int64(1) {
		return 0, nil
	}
	if len(reply) == 2 && reply[0] == int64(0) {
		if s, ok := reply[1].(string); ok {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil || fencing.Token(n) <= token { // not written by a guard
				return 0, fmt.Errorf("the fence holds %.32q, not a token in decimal without leading zeros", s)
			}
			return fencing.Token(n), nil
		}
	}
	return 0, errors.New("unexpected reply from the script")
}
