package testenv_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/distlock/lock/internal/testenv"
)

// TestServices_answer checks that the servers scripts/services.sh starts
// speak their protocols, so that a broken script fails here and not as a
// puzzle in a driver's test.
func TestServices_answer(t *testing.T) {
	for _, addr := range testenv.RedisAddrs(t) {
		t.Run("redis/"+addr, func(t *testing.T) {
			c := dial(t, addr)
			if _, err := io.WriteString(c, "PING\r\n"); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || line != "+PONG\r\n" {
				t.Fatalf("PING answered %q, %v; want +PONG", line, err)
			}
		})
	}
	t.Run("postgres", func(t *testing.T) {
		u, err := url.Parse(testenv.PostgresDSN(t))
		if err != nil {
			t.Fatalf("DISTLOCK_POSTGRES_DSN does not parse as a URL: %v", err)
		}
		c := dial(t, u.Host)
		// An SSLRequest: a server answers with one byte, 'S' or 'N'.
		var req [8]byte
		binary.BigEndian.PutUint32(req[0:], 8)
		binary.BigEndian.PutUint32(req[4:], 80877103)
		if _, err := c.Write(req[:]); err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil || (b[0] != 'N' && b[0] != 'S') {
			t.Fatalf("SSLRequest answered %q, %v; want 'N' or 'S'", b[:], err)
		}
	})
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return c
}
