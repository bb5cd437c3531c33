package lock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/distlock/lock"
)

func TestError_messageFormat(t *testing.T) {
	c := openScripted(t, &scriptedConn{onAcquire: heldAlways}, false)
	_, err := c.TryAcquire(context.Background(), "invoice:42")
	if got, want := err.Error(), `lock: acquire "invoice:42": held by another holder`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var e *lock.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(%v, *lock.Error) = false", err)
	}
	if e.Op != "acquire" || e.Key != "invoice:42" || !errors.Is(e.Err, lock.ErrNotAcquired) {
		t.Errorf("Error = %+v, want Op acquire, Key invoice:42, Err ErrNotAcquired", e)
	}

	tests := []struct {
		e    *lock.Error
		want string
	}{
		{&lock.Error{Op: "release", Key: "k", Err: lock.ErrNotHeld}, `lock: release "k": lock is not held`},
		{&lock.Error{Op: "ping", Err: errBackendDown}, `lock: ping: backend down`},
		{&lock.Error{Op: "extend", Key: "a\"b\n", Err: lock.ErrNotHeld}, `lock: extend "a\"b\n": lock is not held`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestError_longKeyShortened(t *testing.T) {
	huge := strings.Repeat("k", 10<<20)
	c := openScripted(t, &scriptedConn{}, false)
	_, err := c.TryAcquire(context.Background(), huge)
	var e *lock.Error
	if !errors.As(err, &e) || !errors.Is(err, lock.ErrInvalidKey) {
		t.Fatalf("TryAcquire with a 10MB key: err = %v, want a *lock.Error matching ErrInvalidKey", err)
	}
	msg := err.Error()
	if overhead := len(msg) - len(e.Err.Error()); overhead >= 200 {
		t.Errorf("message is %d bytes besides its cause; the key should be shortened", overhead)
	}
	if !strings.HasPrefix(msg, `lock: acquire "kkkk`) {
		t.Errorf("message %.80q does not start with the key's beginning", msg)
	}

	// A cut through a multi-byte rune must not leave invalid UTF-8.
	for _, r := range []string{"é", "€", "😀"} {
		msg := (&lock.Error{Op: "acquire", Key: strings.Repeat(r, 1<<16), Err: lock.ErrNotAcquired}).Error()
		if len(msg) >= 200+len(lock.ErrNotAcquired.Error()) {
			t.Errorf("%s key: message is %d bytes", r, len(msg))
		}
		if !utf8.ValidString(msg) || strings.Contains(msg, `\x`) {
			t.Errorf("%s key: message %q holds a cut rune", r, msg)
		}
	}
}
