package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// send publishes m to the bucket's stream and waits for its
// acknowledgement, sending it again while ctx lasts if no answer came
// within the attempt timeout, or if it provably was not sent. It reports
// whether it sent m more than once. A re-send is safe: each message is
// conditional on the key's last revision, so a second copy of an applied
// write fails, and the callers then read the key to learn what happened.
func (c *conn) send(ctx context.Context, m *nats.Msg) (*jetstream.PubAck, bool, error) {
	for n := 0; ; n++ {
		actx, cancel := context.WithTimeout(ctx, c.cfg.AttemptTimeout)
		ack, err := c.js.PublishMsg(actx, m)
		cancel()
		if err == nil || ctx.Err() != nil || !c.again(ctx, err) {
			return ack, n > 0, err
		}
	}
}

// entry is a key's last message, as the stream leader has it.
type entry struct {
	rev   uint64 // its revision
	live  bool   // a value, not a release's or an expiry's marker
	value string // the holder's value
	token uint64 // the grant's revision
	ttl   time.Duration
	at    time.Time // when the server stored it
}

// errNoMessage is the stream's answer for a subject without messages.
const errNoMessage = 10037

// last reads subj's last message at the stream leader (a direct get, which
// a follower may answer from behind, could not tell what a write of ours
// did). It is a read: sent again like send's writes.
func (c *conn) last(ctx context.Context, subj string) (entry, error) {
	req, _ := json.Marshal(struct {
		Subject string `json:"last_by_subj"`
	}{subj})
	for {
		actx, cancel := context.WithTimeout(ctx, c.cfg.AttemptTimeout)
		m, err := c.nc.RequestWithContext(actx, c.api+"STREAM.MSG.GET."+c.stream, req)
		cancel()
		if err == nil {
			return parseEntry(m.Data)
		}
		if ctx.Err() != nil || !c.again(ctx, err) {
			return entry{}, err
		}
	}
}

// parseEntry reads the stream's answer to a message get.
func parseEntry(data []byte) (entry, error) {
	var r struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Seq    uint64    `json:"seq"`
			Header []byte    `json:"hdrs"`
			Data   []byte    `json:"data"`
			Time   time.Time `json:"time"`
		} `json:"message"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return entry{}, fmt.Errorf("a malformed answer to a read: %w", err)
	}
	switch {
	case r.Error != nil && r.Error.ErrorCode == errNoMessage:
		return entry{}, nil
	case r.Error != nil:
		return entry{}, r.Error
	case r.Message == nil:
		return entry{}, errors.New("an empty answer to a read")
	}
	e := entry{rev: r.Message.Seq, token: r.Message.Seq, value: string(r.Message.Data), at: r.Message.Time, live: true}
	if len(r.Message.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(r.Message.Header)
		if err != nil {
			return entry{}, fmt.Errorf("malformed headers in a read: %w", err)
		}
		e.live = h.Get(headerOp) == "" && h.Get(headerMark) == ""
		if t, err := strconv.ParseUint(h.Get(headerToken), 10, 64); err == nil && t > 0 {
			e.token = t
		}
		if s, err := strconv.ParseInt(h.Get(headerTTL), 10, 64); err == nil {
			e.ttl = time.Duration(s) * time.Second
		}
	}
	if !e.live {
		e.value, e.token = "", 0
	}
	return e, nil
}

// notSent are failures of requests that never left the client.
var notSent = []error{nats.ErrConnectionReconnecting, nats.ErrReconnectBufExceeded, nats.ErrDisconnected}

// noLeader are answers that no stream leader took the request: an
// election is under way. So is an API error of code 503 (JetStream
// temporarily unavailable).
var noLeader = []error{nats.ErrNoResponders, jetstream.ErrNoStreamResponse}

// pauseNoLeader is the pause before a request that found no leader, or
// was not sent, goes again.
const pauseNoLeader = 25 * time.Millisecond

// again reports whether a request that failed with err may go again
// within ctx, after what it takes: a pause if it was not sent or found no
// leader; a check of the server if it went unanswered (see moves).
func (c *conn) again(ctx context.Context, err error) bool {
	var ae *jetstream.APIError
	switch {
	case isAny(err, notSent), isAny(err, noLeader), errors.As(err, &ae) && ae.Code == 503:
		pause(ctx, pauseNoLeader)
		return ctx.Err() == nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		c.moved.check(ctx, c)
		return ctx.Err() == nil
	}
	return false
}

// pingWait bounds the check of a server that left a request unanswered.
const pingWait = 250 * time.Millisecond

// moves checks the server of a connection the driver made when requests
// go unanswered, and moves the connection to another server when the
// server does not answer a ping either: a hung server would otherwise
// hold every request until the ping timer gives it up.
type moves struct {
	mu   sync.Mutex
	last time.Time // the last move
}

func (mv *moves) check(ctx context.Context, c *conn) {
	if !c.own || c.nc.Status() != nats.CONNECTED {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, pingWait)
	err := c.nc.FlushWithContext(pctx)
	cancel()
	if err == nil || ctx.Err() != nil {
		return // the server answers: the stream's leader is being elected
	}
	mv.mu.Lock()
	defer mv.mu.Unlock()
	if time.Since(mv.last) < c.cfg.AttemptTimeout {
		return // another call moved it just now
	}
	mv.last = time.Now()
	c.nc.ForceReconnect()
}

// pause waits for d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
