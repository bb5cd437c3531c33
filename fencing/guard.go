package fencing

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// ErrStale is matched by the error of a guard that refused a token because
// a newer one had been admitted for the resource. The holder's lock has
// since been granted to someone else. The error is a [*StaleError].
var ErrStale = errors.New("stale fencing token")

// ErrNoToken is matched by the error of a guard asked to admit the zero
// Token, which no lock issues, and of [FromHeader] for a request without a
// token.
var ErrNoToken = errors.New("no fencing token")

// StaleError is the error of a guard that refused a token. It matches
// [ErrStale].
type StaleError struct {
	Resource string
	Token    Token // the token refused
	Newest   Token // the newest token admitted for Resource, newer than Token
}

// Error says which token was refused for which resource, and why.
func (e *StaleError) Error() string {
	return "fencing: token " + e.Token.String() + " for " + strconv.Quote(e.Resource) +
		" is older than " + e.Newest.String() + ", the newest admitted"
}

// Is reports whether target is [ErrStale].
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// A Guard protects writes to resources. It lets a write through only with
// a token no older than the newest it admitted for the resource. So a
// holder whose lock ran out (and was granted to someone else, with a newer
// token) cannot overwrite the newer holder's work. Equal tokens are
// admitted, so that a holder may write several times under one lock.
//
// The check and the write are one atomic step. No write with an older
// token can land between them. [MemoryGuard] implements Guard in memory.
// fencing/pgguard implements it in PostgreSQL, and fencing/sqlguard over
// database/sql, where the write runs in the check's transaction.
// fencing/redisguard checks in Redis, where a Go
// function cannot join a script. So it does not implement Guard, but
// carries the write (SET, HSET) in the checking script instead.
type Guard interface {
	// Do runs write if token is no older than the newest token admitted for
	// resource. If write returns nil, Do makes token the newest. If token
	// is older, Do returns a [*StaleError] and does not call write. If
	// token is zero, Do returns an error matching [ErrNoToken]. Otherwise
	// it returns write's error, and an error of write leaves the newest
	// token as it was.
	Do(ctx context.Context, resource string, token Token, write func(context.Context) error) error
}

// MemoryGuard is a [Guard] for resources that live in this process. Its
// zero value is ready to use, and it is safe for concurrent use. Writes to
// one resource run one at a time, and writes to different resources run at
// once. It remembers the newest token of every resource it has seen.
type MemoryGuard struct {
	mu        sync.Mutex
	resources map[string]*memoryResource
}

var _ Guard = (*MemoryGuard)(nil)

// memoryResource is the state of one resource of a MemoryGuard.
type memoryResource struct {
	mu     sync.Mutex // held while a write runs
	newest Token
}

// NewMemoryGuard returns an empty MemoryGuard.
func NewMemoryGuard() *MemoryGuard { return new(MemoryGuard) }

func (g *MemoryGuard) resource(name string) *memoryResource {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.resources[name]
	if r == nil {
		if g.resources == nil {
			g.resources = make(map[string]*memoryResource)
		}
		r = new(memoryResource)
		g.resources[name] = r
	}
	return r
}

// Do runs write under the resource's mutex if token is admitted (see
// [Guard]).
func (g *MemoryGuard) Do(ctx context.Context, resource string, token Token, write func(context.Context) error) error {
	if token.IsZero() {
		return fmt.Errorf("fencing: %w for %q", ErrNoToken, resource)
	}
	r := g.resource(resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.newest {
		return &StaleError{Resource: resource, Token: token, Newest: r.newest}
	}
	if write != nil {
		if err := write(ctx); err != nil {
			return err
		}
	}
	r.newest = token
	return nil
}

// Admit makes token the newest admitted for resource, unless a newer one
// was admitted. In that case it returns a [*StaleError]. Admit is Do
// without a write.
func (g *MemoryGuard) Admit(ctx context.Context, resource string, token Token) error {
	return g.Do(ctx, resource, token, nil)
}

// Newest returns the newest token admitted for resource, and the zero
// Token if none was.
func (g *MemoryGuard) Newest(resource string) Token {
	r := g.resource(resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.newest
}
