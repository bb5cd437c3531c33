package fencing_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/distlock/lock/fencing"
)

// failingGuard admits every token, runs the write, then fails, as a
// transaction whose commit fails would.
type failingGuard struct{}

func (failingGuard) Do(ctx context.Context, _ string, _ fencing.Token, write func(context.Context) error) error {
	write(ctx)
	return errors.New("commit failed")
}

func serve(t *testing.T, g fencing.Guard) (*httptest.Server, *[]string) {
	t.Helper()
	var written []string
	h := fencing.Middleware(g, func(r *http.Request) string { return r.URL.Path })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := fencing.FromContext(r.Context())
		body, _ := io.ReadAll(r.Body)
		written = append(written, tok.String()+":"+string(body))
		w.Header().Set("X-Written", "yes")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, "stored\n")
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, &written
}

func put(t *testing.T, client *http.Client, url string, tok fencing.Token, body string) (int, string, http.Header) {
	t.Helper()
	ctx := context.Background()
	if tok != 0 {
		ctx = fencing.NewContext(ctx, tok)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestMiddleware_admitsRefusesAndHoldsResponses(t *testing.T) {
	srv, written := serve(t, fencing.NewMemoryGuard())
	client := &http.Client{Transport: fencing.Transport(nil)}

	if code, body, h := put(t, client, srv.URL+"/doc", 5, "a"); code != http.StatusCreated || body != "stored\n" || h.Get("X-Written") != "yes" {
		t.Errorf("write with token 5 = %d %q %v, want the handler's 201", code, body, h)
	}
	if code, _, _ := put(t, client, srv.URL+"/doc", 5, "b"); code != http.StatusCreated {
		t.Errorf("second write with the same token = %d, want 201", code)
	}
	if code, body, _ := put(t, client, srv.URL+"/doc", 4, "stale"); code != http.StatusConflict || !strings.Contains(body, "older than 5") {
		t.Errorf("write with token 4 after 5 = %d %q, want 409 naming the newest token", code, body)
	}
	if code, _, _ := put(t, client, srv.URL+"/other", 1, "c"); code != http.StatusCreated {
		t.Errorf("write to another resource = %d, want 201", code)
	}
	if code, _, _ := put(t, client, srv.URL+"/doc", 0, "none"); code != http.StatusBadRequest {
		t.Errorf("write without a token = %d, want 400", code)
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/doc", strings.NewReader("x"))
	req.Header.Set(fencing.Header, "12abc")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("write with a malformed token = %d, want 400", resp.StatusCode)
	}
	want := []string{"5:a", "5:b", "1:c"}
	if strings.Join(*written, ",") != strings.Join(want, ",") {
		t.Errorf("the handler wrote %v, want %v", *written, want)
	}
}

// A guard that fails after the handler ran: the client sees 503, not the
// handler's success.
func TestMiddleware_guardFailureHidesHandlersAnswer(t *testing.T) {
	srv, _ := serve(t, failingGuard{})
	code, body, h := put(t, &http.Client{Transport: fencing.Transport(nil)}, srv.URL+"/doc", 3, "a")
	if code != http.StatusServiceUnavailable || strings.Contains(body, "stored") || h.Get("X-Written") != "" {
		t.Errorf("answer when the guard failed after the handler = %d %q %v, want 503 without the handler's answer", code, body, h)
	}
}

// A handler that answers 5xx has failed: the guard is told so (a guard
// with a transaction rolls it back), its token is not recorded, and the
// client sees the handler's own answer.
func TestMiddleware_handlerServerErrorUndoesTheWrite(t *testing.T) {
	g := fencing.NewMemoryGuard()
	h := fencing.Middleware(g, func(*http.Request) string { return "doc" })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("fail") != "" {
			http.Error(w, "disk full", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	for _, c := range []struct {
		token  fencing.Token
		query  string
		code   int
		newest fencing.Token
	}{
		{3, "", http.StatusNoContent, 3},
		{5, "?fail=1", http.StatusInternalServerError, 3}, // 5 was not recorded
		{4, "", http.StatusNoContent, 4},
	} {
		req := httptest.NewRequest(http.MethodPut, "/doc"+c.query, nil)
		fencing.SetHeader(req.Header, c.token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.code || g.Newest("doc") != c.newest {
			t.Errorf("token %d%s: %d %q, newest %d; want %d, newest %d", c.token, c.query, rec.Code, rec.Body, g.Newest("doc"), c.code, c.newest)
		}
		if c.code == http.StatusInternalServerError && !strings.Contains(rec.Body.String(), "disk full") {
			t.Errorf("token %d%s: body %q, want the handler's own answer", c.token, c.query, rec.Body)
		}
	}
}

func TestFromHeader(t *testing.T) {
	for _, c := range []struct {
		v    string
		want fencing.Token
		err  error
	}{
		{"42", 42, nil},
		{"18446744073709551615", 18446744073709551615, nil},
		{"", 0, fencing.ErrNoToken},
		{"0", 0, fencing.ErrMalformedToken},
		{"-1", 0, fencing.ErrMalformedToken},
		{"18446744073709551616", 0, fencing.ErrMalformedToken},
		{" 7", 0, fencing.ErrMalformedToken},
	} {
		h := http.Header{}
		if c.v != "" {
			h.Set(fencing.Header, c.v)
		}
		got, err := fencing.FromHeader(h)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("FromHeader(%q) = %v, %v; want %v, %v", c.v, got, err, c.want, c.err)
		}
	}
}
