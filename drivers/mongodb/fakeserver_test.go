package mongodb_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Wire protocol opcodes the fake speaks.
const (
	opReply = 1    // the answer to an OP_QUERY
	opQuery = 2004 // the Go driver's first hello (isMaster) on a connection
	opMsg   = 2013 // every command after it
)

// fakeDeployment is what a fakeServer says it is in its hello answers.
type fakeDeployment int

const (
	fakePrimary    fakeDeployment = iota // a replica set's primary
	fakeMongos                           // a sharded cluster's router
	fakeStandalone                       // a server of its own
)

// fakeServer is a MongoDB wire-protocol server that plays a replica set's
// primary (or a mongos, or a standalone server) well enough for the driver to connect and run its
// settings check: it answers hello (and the first connection message,
// isMaster over OP_QUERY), create and endSessions, and fails any other
// command with CommandNotFound. A replica set cannot run on this machine
// (FerretDB v1 is a standalone server), and the check's concern rules are
// judged on one only. It stores nothing.
type fakeServer struct {
	ln   net.Listener
	kind fakeDeployment
	t    testing.TB
	wg   sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	other []string // commands it does not know, in the order they came
}

// startFakeServer starts a fakeServer of kind on a free port of
// 127.0.0.1, shut when the test ends.
func startFakeServer(t testing.TB, kind fakeDeployment) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, kind: kind, t: t, conns: make(map[net.Conn]struct{})}
	s.wg.Go(s.accept)
	t.Cleanup(s.shut)
	return s
}

// uri is the server's MongoDB URI.
func (s *fakeServer) uri() string { return "mongodb://" + s.ln.Addr().String() + "/" }

// unknown returns the commands the server failed as unknown.
func (s *fakeServer) unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.other...)
}

// shut closes the listener and every connection, and waits for their
// goroutines.
func (s *fakeServer) shut() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *fakeServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // shut
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(c) })
	}
}

// serve answers the messages of one connection until it closes.
func (s *fakeServer) serve(c net.Conn) {
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	r := bufio.NewReader(c)
	for {
		var h [16]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		size := int(binary.LittleEndian.Uint32(h[0:]))
		reqID := binary.LittleEndian.Uint32(h[4:])
		op := binary.LittleEndian.Uint32(h[12:])
		if size < 16 || size > 48<<20 {
			s.t.Errorf("fake mongodb: message of %d bytes", size)
			return
		}
		body := make([]byte, size-16)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var (
			cmd   bson.Raw
			err   error
			frame func(reqID uint32, doc []byte) []byte
		)
		switch op {
		case opQuery:
			cmd, err = queryCommand(body)
			frame = replyMessage
		case opMsg:
			cmd, err = msgCommand(body)
			frame = msgMessage
		default:
			err = errors.New("an opcode it does not speak")
		}
		if err != nil {
			s.t.Errorf("fake mongodb: message of opcode %d: %v", op, err)
			return
		}
		doc, err := bson.Marshal(s.answer(cmd))
		if err != nil {
			s.t.Errorf("fake mongodb: its own answer: %v", err)
			return
		}
		reply := frame(reqID, doc)
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// answer returns the answer to the command cmd.
func (s *fakeServer) answer(cmd bson.Raw) bson.D {
	name := ""
	if elems, err := cmd.Elements(); err == nil && len(elems) > 0 {
		name = elems[0].Key()
	}
	switch name {
	case "hello", "isMaster", "ismaster":
		return s.hello()
	case "create", "endSessions":
		return bson.D{{Key: "ok", Value: 1.0}}
	}
	s.mu.Lock()
	s.other = append(s.other, name)
	s.mu.Unlock()
	return bson.D{
		{Key: "ok", Value: 0.0},
		{Key: "errmsg", Value: "no such command: '" + name + "' (the test's fake server)"},
		{Key: "code", Value: int32(59)},
		{Key: "codeName", Value: "CommandNotFound"},
	}
}

// hello is the answer of a MongoDB 7.0 primary of the replica set rs0
// whose one member is the fake itself, of a mongos, or of a standalone
// server. It has no
// topologyVersion, so the driver polls instead of streaming hellos.
func (s *fakeServer) hello() bson.D {
	addr := s.ln.Addr().String()
	d := bson.D{
		{Key: "helloOk", Value: true},
		{Key: "ismaster", Value: true},
		{Key: "isWritablePrimary", Value: true},
		{Key: "maxBsonObjectSize", Value: int32(16 << 20)},
		{Key: "maxMessageSizeBytes", Value: int32(48000000)},
		{Key: "maxWriteBatchSize", Value: int32(100000)},
		{Key: "localTime", Value: bson.NewDateTimeFromTime(time.Now())},
		{Key: "logicalSessionTimeoutMinutes", Value: int32(30)},
		{Key: "minWireVersion", Value: int32(0)},
		{Key: "maxWireVersion", Value: int32(21)},
		{Key: "readOnly", Value: false},
	}
	switch s.kind {
	case fakePrimary:
		d = append(d,
			bson.E{Key: "setName", Value: "rs0"},
			bson.E{Key: "setVersion", Value: int32(1)},
			bson.E{Key: "electionId", Value: bson.ObjectID{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1}},
			bson.E{Key: "hosts", Value: bson.A{addr}},
			bson.E{Key: "primary", Value: addr},
			bson.E{Key: "me", Value: addr})
	case fakeMongos:
		d = append(d, bson.E{Key: "msg", Value: "isdbgrid"})
	}
	return append(d, bson.E{Key: "ok", Value: 1.0})
}

// queryCommand returns the command of an OP_QUERY's body: flags, the
// collection's name, skip, limit, then the query (a command, perhaps
// wrapped in $query).
func queryCommand(body []byte) (bson.Raw, error) {
	if len(body) < 4 {
		return nil, errors.New("short body")
	}
	rest := body[4:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 || len(rest) < end+1+8 {
		return nil, errors.New("no collection name, skip and limit")
	}
	doc, err := readDocument(rest[end+1+8:])
	if err != nil {
		return nil, err
	}
	if q, ok := doc.Lookup("$query").DocumentOK(); ok {
		return q, nil
	}
	return doc, nil
}

// msgCommand returns the command of an OP_MSG's body: flags, then
// sections, the command being the one of kind 0. The fake takes no
// checksums and no document sequences (kind 1), which the commands it
// answers do not use.
func msgCommand(body []byte) (bson.Raw, error) {
	if len(body) < 5 {
		return nil, errors.New("short body")
	}
	if flags := binary.LittleEndian.Uint32(body); flags&1 != 0 {
		return nil, errors.New("a checksum, which the fake does not take")
	}
	if body[4] != 0 {
		return nil, fmt.Errorf("section of kind %d first, not 0", body[4])
	}
	return readDocument(body[5:])
}

// readDocument returns the BSON document b begins with.
func readDocument(b []byte) (bson.Raw, error) {
	if len(b) < 5 {
		return nil, errors.New("no document")
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n < 5 || n > len(b) {
		return nil, fmt.Errorf("document of %d bytes in %d", n, len(b))
	}
	doc := bson.Raw(b[:n])
	return doc, doc.Validate()
}

// replyMessage is an OP_REPLY to request reqID with the one document doc.
func replyMessage(reqID uint32, doc []byte) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0) // flags
	b = binary.LittleEndian.AppendUint64(b, 0) // cursor ID
	b = binary.LittleEndian.AppendUint32(b, 0) // starting from
	b = binary.LittleEndian.AppendUint32(b, 1) // documents returned
	return message(reqID, opReply, append(b, doc...))
}

// msgMessage is an OP_MSG to request reqID with the one document doc.
func msgMessage(reqID uint32, doc []byte) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0) // flags
	b = append(b, 0)                           // a section of kind 0: the body
	return message(reqID, opMsg, append(b, doc...))
}

// message is a wire message of opcode op, in answer to request reqID.
func message(reqID, op uint32, body []byte) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, uint32(16+len(body)))
	b = binary.LittleEndian.AppendUint32(b, 0) // its own request ID: nobody answers it
	b = binary.LittleEndian.AppendUint32(b, reqID)
	b = binary.LittleEndian.AppendUint32(b, op)
	return append(b, body...)
}
