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
	t.Run("mongodb", func(t *testing.T) {
		u, err := url.Parse(testenv.MongoDBURI(t))
		if err != nil {
			t.Fatalf("DISTLOCK_MONGODB_URI does not parse as a URL: %v", err)
		}
		c := dial(t, u.Host)
		// An OP_MSG {isMaster: 1, $db: "admin"}: the server answers with a
		// message of the same protocol.
		doc := bsonDoc(bsonInt32("isMaster", 1), bsonString("$db", "admin"))
		body := append([]byte{0, 0, 0, 0, 0}, doc...) // flagBits, then a section of kind 0
		var msg []byte
		msg = binary.LittleEndian.AppendUint32(msg, uint32(16+len(body)))
		msg = binary.LittleEndian.AppendUint32(msg, 1)    // requestID
		msg = binary.LittleEndian.AppendUint32(msg, 0)    // responseTo
		msg = binary.LittleEndian.AppendUint32(msg, 2013) // OP_MSG
		msg = append(msg, body...)
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		var hdr [16]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			t.Fatalf("no reply to isMaster: %v", err)
		}
		if op := binary.LittleEndian.Uint32(hdr[12:]); op != 2013 || binary.LittleEndian.Uint32(hdr[8:]) != 1 {
			t.Fatalf("reply header %x: want an OP_MSG answering request 1", hdr)
		}
	})
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

// bsonDoc assembles a BSON document from its elements.
func bsonDoc(elems ...[]byte) []byte {
	var body []byte
	for _, e := range elems {
		body = append(body, e...)
	}
	doc := binary.LittleEndian.AppendUint32(nil, uint32(4+len(body)+1))
	return append(append(doc, body...), 0)
}

func bsonInt32(name string, v int32) []byte {
	e := append([]byte{0x10}, name...)
	e = append(e, 0)
	return binary.LittleEndian.AppendUint32(e, uint32(v))
}

func bsonString(name, v string) []byte {
	e := append([]byte{0x02}, name...)
	e = append(e, 0)
	e = binary.LittleEndian.AppendUint32(e, uint32(len(v)+1))
	return append(append(e, v...), 0)
}
