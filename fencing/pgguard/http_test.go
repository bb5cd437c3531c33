package pgguard_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/pgguard"
)

// Behind fencing.Middleware the handler writes in the guard's
// transaction: a stale token is answered 409, and a handler whose
// statement failed commits nothing, not even its token (503).
func TestDo_behindMiddleware(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool, "_data")
	data := newValueTable(t, pool, table)
	h := fencing.Middleware(g, func(*http.Request) string { return "r" })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := strconv.ParseInt(r.URL.Query().Get("v"), 10, 64)
		if err != nil { // a statement that fails, and aborts the transaction
			_, err = pgguard.Tx(r.Context()).Exec(r.Context(), "SELECT 1/0")
		} else {
			err = setValue(data, "r", v)(r.Context())
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
	if v, tok := value(t, pool, data, "r"), newest(t, pool, table, "r"); v != 60 || tok != 6 {
		t.Fatalf("value, fence = %d, %d; want 60, 6", v, tok)
	}
}
