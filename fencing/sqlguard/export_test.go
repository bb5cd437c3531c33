package sqlguard

import "context"

// Querier is what an admission runs its statements on: the caller's
// transaction, or a database.
type Querier = querier

// AdmitFunc admits token for resource through q, in the table whose quoted
// name is ident, and returns the fence as it left it.
type AdmitFunc func(ctx context.Context, q Querier, ident, resource string, token int64) (newest int64, err error)

// Admission returns d's admission. If stmt is not nil, the admission runs
// the statement stmt makes from the table's quoted name instead of d's own.
func Admission(d Dialect, stmt func(ident string) string) AdmitFunc {
	x := dialects[d]
	if stmt == nil {
		stmt = x.admit
	}
	return func(ctx context.Context, q Querier, ident, resource string, token int64) (int64, error) {
		return x.run(ctx, q, stmt(ident), resource, token)
	}
}

// Broken returns a copy of g whose admissions run admit instead, for
// tests that prove the concurrency checks can fail.
func Broken(g *Guard, admit AdmitFunc) *Guard {
	d := *g.t.d
	t := *g.t
	t.d = &d
	d.run = func(ctx context.Context, q querier, _, resource string, token int64) (int64, error) {
		return admit(ctx, q, t.ident, resource, token)
	}
	return &Guard{db: g.db, t: &t}
}
