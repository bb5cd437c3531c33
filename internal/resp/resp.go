// Package resp is the smallest RESP2 codec this repository's tests and
// benchmarks need to talk to Redis without a client library: a command
// written as an array of bulk strings, and one reply read.
package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// AppendArray appends the header of an array of n elements to b.
func AppendArray(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends s as a bulk string to b.
func AppendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendCommand appends args as a command to b.
func AppendCommand(b []byte, args ...string) []byte {
	b = AppendArray(b, len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}

// ReadReply reads one reply from r: a status or bulk string as a string,
// an integer as an int64, a nil bulk string or array as nil, an array as
// a []any of such values, and an error reply as an error whose message is
// the server's.
func ReadReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("resp: malformed reply line %q", line)
	}
	body := string(line[1 : len(line)-2]) // a copy: the next read reuses line's buffer
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, errors.New(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err // $-1: a nil reply
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = ReadReply(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("resp: unexpected reply %q", body)
}
