package redlock

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The scripts take keys and values only through KEYS and ARGV, so that
// nothing a caller passes is ever spliced into script text.

// releaseScript deletes KEYS[1] if it holds ARGV[1] and, unless ARGV[2]
// is empty, announces it on channel ARGV[2], with the released value as
// the message, so that a waiter can tell one release's announcements by
// several nodes from another release's. It returns 1 if it deleted the
// key, 0 otherwise.
var releaseScript = NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
	redis.call('del', KEYS[1])
	if ARGV[2] ~= '' then
		redis.call('publish', ARGV[2], ARGV[1])
	end
	return 1
end
return 0
`)

// extendScript resets the expiry of KEYS[1] to ARGV[2] milliseconds if it
// holds ARGV[1]. It returns 1 if it did, -1 if the key does not exist,
// and 0 if it holds another value. A key that expired is gone, so an
// expired lease is never revived here (see Redlock.Extend for the nodes
// where the key is absent).
var extendScript = NewScript(`
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then
	return redis.call('pexpire', KEYS[1], ARGV[2])
end
if not v then
	return -1
end
return 0
`)

// fencedAcquireScript sets KEYS[1] to ARGV[1] for ARGV[2] milliseconds if
// it does not exist, and then returns the key's fencing counter KEYS[2]
// (0 if it has none); it returns -1 if KEYS[1] exists.
var fencedAcquireScript = NewScript(`
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return tonumber(redis.call('get', KEYS[2]) or '0')
end
return -1
`)

// fenceScript raises the fencing counter KEYS[2] to ARGV[2], a token
// drawn by an acquisition of KEYS[1] with the value ARGV[1], whether or
// not that acquisition holds the key on this node: a counter that rises
// never makes a later token smaller, and a token written on every node
// that answers survives more of their losses (see "Restarts and
// persistence" in DESIGN.md). It returns 1 if KEYS[1] holds ARGV[1], 0
// otherwise.
var fenceScript = NewScript(`
if tonumber(redis.call('get', KEYS[2]) or '0') < tonumber(ARGV[2]) then
	redis.call('set', KEYS[2], ARGV[2])
end
if redis.call('get', KEYS[1]) ~= ARGV[1] then
	return 0
end
return 1
`)

// retakeScript sets KEYS[1] to ARGV[1] for ARGV[2] milliseconds if it
// does not exist or holds one of ARGV[3], ARGV[4] ...: values that this
// client released, and that the node may still hold (see leftovers). It
// returns 1 if it set the key, 0 otherwise. It is the SET NX of an
// acquisition that would otherwise find the client's own released value.
var retakeScript = NewScript(`
local v = redis.call('get', KEYS[1])
if v then
	local mine = false
	for i = 3, #ARGV do
		if v == ARGV[i] then
			mine = true
		end
	end
	if not mine then
		return 0
	end
end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// undoScript deletes KEYS[1] if it holds ARGV[1], without announcing it,
// to undo a failed acquisition. It returns 1 if it deleted the key, 0
// otherwise.
var undoScript = NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
	redis.call('del', KEYS[1])
	return 1
end
return 0
`)

// inspectScript reads who holds KEYS[1], in one round trip: it returns
// nil if nobody does, and otherwise the value, its PTTL in milliseconds,
// and the fencing counter KEYS[2] as a decimal string (empty if none),
// a string so that a counter past 2^53 comes back exact.
var inspectScript = NewScript(`
local v = redis.call('get', KEYS[1])
if not v then
	return false
end
return {v, redis.call('pttl', KEYS[1]), redis.call('get', KEYS[2]) or ''}
`)

// Script is a Lua script with its SHA-1, for EVALSHA.
type Script struct {
	Src string
	SHA string

	sha any // SHA in an interface, made once: an EVALSHA's arguments are []any
}

// NewScript returns src with its SHA-1.
func NewScript(src string) *Script {
	sum := sha1.Sum([]byte(src))
	s := &Script{Src: src, SHA: hex.EncodeToString(sum[:])}
	s.sha = s.SHA
	return s
}

// call returns the arguments of an EVALSHA of s with keys and args, to be
// sent by [run] to any number of nodes.
func (s *Script) call(keys []string, args ...any) []any {
	cmd := make([]any, 0, 3+len(keys)+len(args))
	sha := s.sha
	if sha == nil { // a Script not made by NewScript
		sha = s.SHA
	}
	cmd = append(cmd, "EVALSHA", sha, int64(len(keys)))
	for _, k := range keys {
		cmd = append(cmd, k)
	}
	return append(cmd, args...)
}

// eval sends call (from Script.call) to n and returns the script's reply,
// falling back to EVAL with the script's text if n does not know it.
func eval(ctx context.Context, n Node, s *Script, call []any) (any, error) {
	reply, err := n.Do(ctx, call)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		full := append([]any{"EVAL", s.Src}, call[2:]...)
		reply, err = n.Do(ctx, full)
	}
	return reply, err
}

// run is eval for the scripts whose reply is an integer.
func run(ctx context.Context, n Node, s *Script, call []any) (int64, error) {
	reply, err := eval(ctx, n, s, call)
	if err != nil {
		return 0, err
	}
	v, ok := reply.(int64)
	if !ok {
		return 0, fmt.Errorf("script %.8s replied %T, want an integer", s.SHA, reply)
	}
	return v, nil
}

// errNoReply marks a node that answered with nothing usable.
var errNoReply = errors.New("unexpected reply")
