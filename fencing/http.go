package fencing

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
)

// Header is the HTTP request header that carries a fencing token, in
// decimal.
const Header = "Fencing-Token"

// SetHeader sets the fencing-token header of h to t.
func SetHeader(h http.Header, t Token) { h.Set(Header, t.String()) }

// ErrMalformedToken is matched by the error of [FromHeader] for a header
// that is not a token.
var ErrMalformedToken = errors.New("malformed fencing token")

// FromHeader returns the token in h's fencing-token header. Without one,
// the error matches [ErrNoToken]. With one that is not a positive decimal
// number, the error matches [ErrMalformedToken].
func FromHeader(h http.Header) (Token, error) {
	v := h.Get(Header)
	if v == "" {
		return 0, fmt.Errorf("fencing: %w: the request has no %s header", ErrNoToken, Header)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("fencing: %w: %s %.32q", ErrMalformedToken, Header, v)
	}
	return Token(n), nil
}

type contextKey struct{}

// NewContext returns a copy of ctx that carries t, for [Transport].
func NewContext(ctx context.Context, t Token) context.Context {
	return context.WithValue(ctx, contextKey{}, t)
}

// FromContext returns the token that ctx carries, and false if it carries
// none.
func FromContext(ctx context.Context) (Token, bool) {
	t, ok := ctx.Value(contextKey{}).(Token)
	return t, ok
}

// Transport returns an http.RoundTripper that sends each request through
// base (http.DefaultTransport if nil) with the fencing-token header set to
// the token of the request's context (see [NewContext]). A request whose
// context carries none goes as it is.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return transport{base}
}

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, ok := FromContext(r.Context())
	if !ok {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context()) // a RoundTripper must not modify the request
	SetHeader(r.Header, tok)
	return t.base.RoundTrip(r)
}

// Middleware returns HTTP middleware that guards the resource that
// resource names for each request. It reads the request's token (see
// [FromHeader]) and serves the request through g.Do. So the handler's
// write and the check of the token are one atomic step, and the token is
// recorded once the handler returns. The handler's request carries the
// token in its context ([FromContext]) and whatever g puts there (a
// transaction, for fencing/pgguard).
//
// The handler's response is held back until g.Do has returned, so that a
// client never sees a success that the guard then undid (a transaction
// that failed to commit, say). Guarded handlers should therefore answer
// briefly, not stream. A handler that answers with a 5xx status has
// failed: its write is handed back to the guard as an error, so that a
// guard with a transaction rolls it back and the token is not recorded,
// and the handler's own answer is sent. (On MySQL a failed statement does
// not end its transaction, so without this the rest of the handler's work
// would commit.) A request without a token, or with a malformed one, is
// answered 400 Bad Request. A stale token is answered 409 Conflict. A
// guard that fails otherwise gives 503 Service Unavailable. Each of these
// answers has a one-line plain-text body.
func Middleware(g Guard, resource func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tok, err := FromHeader(r.Header)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var held heldResponse
			err = g.Do(r.Context(), resource(r), tok, func(ctx context.Context) error {
				held = heldResponse{header: w.Header().Clone()}
				next.ServeHTTP(&held, r.WithContext(NewContext(ctx, tok)))
				if held.status >= http.StatusInternalServerError {
					return errHandlerFailed
				}
				return nil
			})
			switch {
			case err == nil, errors.Is(err, errHandlerFailed):
				held.send(w)
			case errors.Is(err, ErrStale):
				http.Error(w, err.Error(), http.StatusConflict)
			case errors.Is(err, ErrNoToken):
				http.Error(w, err.Error(), http.StatusBadRequest)
			default:
				http.Error(w, "fencing: the guard failed: "+err.Error(), http.StatusServiceUnavailable)
			}
		})
	}
}

// errHandlerFailed is a guarded handler's write that answered 5xx, handed
// to the guard so that it undoes the write.
var errHandlerFailed = errors.New("fencing: the handler answered with a server error")

// heldResponse is a response written by a guarded handler, held until the
// guard has decided.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldResponse) Write(p []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return h.body.Write(p)
}

// send writes the held response to w.
func (h *heldResponse) send(w http.ResponseWriter) {
	maps.Copy(w.Header(), h.header)
	w.WriteHeader(cmp.Or(h.status, http.StatusOK))
	w.Write(h.body.Bytes())
}
