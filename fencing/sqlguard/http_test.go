package sqlguard_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/sqlguard"
)

// Behind fencing.Middleware the handler writes in the guard's
// transaction: a stale token is answered 409. A handler whose statement
// failed rolls the transaction back, since MySQL, unlike PostgreSQL, would
// commit the rest of it. Then nothing is committed, not even its token,
// and the middleware answers 503.
func TestDo_behindMiddleware(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db, "_data")
		data := newValueTable(t, b, db, table)
		h := fencing.Middleware(g, func(*http.Request) string { return "r" })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, err := strconv.ParseInt(r.URL.Query().Get("v"), 10, 64)
			if err != nil { // a statement that fails; on MySQL the transaction goes on
				_, err = sqlguard.Tx(r.Context()).ExecContext(r.Context(), "SELECT no_such_column FROM "+data)
			} else {
				err = setValueInDo(b, data, "r", v)(r.Context())
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		}))
		steps := []struct {
			token fencing.Token
			v     string
			code  int
		}{
			{5, "50", http.StatusOK},
			{4, "40", http.StatusConflict},
			{7, "fail", http.StatusInternalServerError}, // the handler's answer, its transaction rolled back
			{6, "60", http.StatusOK},                    // 7 was never admitted
		}
		for _, s := range steps {
			req := httptest.NewRequest("POST", "/?v="+s.v, nil)
			fencing.SetHeader(req.Header, s.token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != s.code {
				t.Fatalf("token %d, v=%s: %d %q, want %d", s.token, s.v, rec.Code, rec.Body, s.code)
			}
		}
		if v, tok := value(t, b, db, data, "r"), newest(t, b, db, table, "r"); v != 60 || tok != 6 {
			t.Fatalf("value, fence = %d, %d; want 60, 6", v, tok)
		}
	})
}
