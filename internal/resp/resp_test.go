package resp

import (
	"bufio"
	"reflect"
	"strings"
	"testing"
)

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand(nil, "SET", "k", ""))
	if want := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"; got != want {
		t.Errorf("AppendCommand = %q, want %q", got, want)
	}
}

func TestReadReply(t *testing.T) {
	for _, c := range []struct {
		in   string
		want any
		err  string
	}{
		{"+OK\r\n", "OK", ""},
		{":-7\r\n", int64(-7), ""},
		{"$3\r\nabc\r\n", "abc", ""},
		{"$0\r\n\r\n", "", ""},
		{"$-1\r\n", nil, ""},
		{"*-1\r\n", nil, ""},
		{"*3\r\n$1\r\nv\r\n:12\r\n$-1\r\n", []any{"v", int64(12), nil}, ""},
		{"-NOSCRIPT No matching script\r\n", nil, "NOSCRIPT No matching script"},
		{"?what\r\n", nil, `resp: unexpected reply "what"`},
		{"+OK\n", nil, `resp: malformed reply line "+OK\n"`},
	} {
		got, err := ReadReply(bufio.NewReader(strings.NewReader(c.in)))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ReadReply(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ReadReply(%q) = %#v, %v, want %#v", c.in, got, err, c.want)
		}
	}
}
