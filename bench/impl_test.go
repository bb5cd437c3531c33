package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	rsredigo "github.com/go-redsync/redsync/v4/redis/redigo"
	rsrueidis "github.com/go-redsync/redsync/v4/redis/rueidis"
	rsvalkey "github.com/go-redsync/redsync/v4/redis/valkeygo"
	redigo "github.com/gomodule/redigo/redis"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidiscompat"
	"github.com/redis/rueidis/rueidislock"
	"github.com/valkey-io/valkey-go"
	"github.com/valkey-io/valkey-go/valkeycompat"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"
	_ "github.com/distlock/lock/drivers/redigo"
	_ "github.com/distlock/lock/drivers/rueidis"
	_ "github.com/distlock/lock/drivers/valkey"
)

// An impl is one lock library over one Redis client, on some nodes.
type impl interface {
	// mutex returns a handle on key for one goroutine's use.
	mutex(key string) mutex
	close()
}

// A mutex is one goroutine's handle on one key.
type mutex interface {
	tryLock(ctx context.Context) error // one attempt
	lock(ctx context.Context) error    // waits, with the library's defaults
	unlock(ctx context.Context) error
}

// impls are the implementations compared, by name (library-client): ours
// and redsync's over go-redis, redigo, rueidis and valkey-go, rueidislock,
// which comes with rueidis, and ours with quorum_first=true (oursqf).
var impls = []string{
	"ours-goredis", "redsync-goredis",
	"ours-redigo", "redsync-redigo",
	"ours-rueidis", "redsync-rueidis", "rueidislock-rueidis",
	"ours-valkey", "redsync-valkey",
	"oursqf-goredis", "oursqf-redigo", "oursqf-rueidis", "oursqf-valkey",
}

// nodeCounts returns the numbers of nodes that implementation name runs
// on: 1 and 5 for a Redlock client, 1 alone for rueidislock, whose
// majority is of keys on one deployment, not of servers, and 5 alone for
// ours with quorum_first, which changes nothing on one node.
func nodeCounts(name string) []int {
	switch {
	case strings.HasPrefix(name, "rueidislock-"):
		return []int{1}
	case strings.HasPrefix(name, "oursqf-"):
		return []int{5}
	}
	return []int{1, 5}
}

// newImpl opens the implementation name on addrs, with its defaults.
func newImpl(t testing.TB, name string, addrs []string) impl {
	t.Helper()
	var im impl
	switch name {
	case "ours-goredis", "ours-redigo", "ours-rueidis", "ours-valkey",
		"oursqf-goredis", "oursqf-redigo", "oursqf-rueidis", "oursqf-valkey":
		urls := make([]string, len(addrs))
		for i, a := range addrs {
			urls[i] = "redis://" + a
		}
		lib, client, _ := strings.Cut(name, "-")
		if lib == "oursqf" {
			urls[0] += "?quorum_first=true"
		}
		c, err := lock.Open(client, strings.Join(urls, ","))
		if err != nil {
			t.Fatal(err)
		}
		// Warnings (a cleanup that failed on a timed-out node) go to the
		// test's log, not stderr, where they cut benchmark lines in half.
		c.SetLogger(slog.New(slog.NewTextHandler(t.Output(), nil)))
		im = ours{c}
	case "redsync-goredis":
		// go-redis at its defaults, as redsync's README has it.
		var pools []rsredis.Pool
		var clients []*goredis.Client
		for _, a := range addrs {
			c := goredis.NewClient(&goredis.Options{Addr: a})
			clients = append(clients, c)
			pools = append(pools, rsgoredis.NewPool(c))
		}
		im = redsyncImpl{rs: redsync.New(pools...), closers: func() {
			for _, c := range clients {
				c.Close()
			}
		}}
	case "redsync-redigo":
		// redigo's Pool has no useful defaults (MaxIdle 0 dials for every
		// command): this is redsync's example pool, with as many idle
		// connections as our driver keeps and without the example's
		// TestOnBorrow PING (a round trip per command), so that redsync
		// pays for nothing ours does not.
		var pools []rsredis.Pool
		var rpools []*redigo.Pool
		for _, a := range addrs {
			p := &redigo.Pool{
				MaxIdle:     10 * runtime.GOMAXPROCS(0),
				IdleTimeout: 240 * time.Second,
				Dial:        func() (redigo.Conn, error) { return redigo.Dial("tcp", a) },
			}
			rpools = append(rpools, p)
			pools = append(pools, rsredigo.NewPool(p))
		}
		im = redsyncImpl{rs: redsync.New(pools...), closers: func() {
			for _, p := range rpools {
				p.Close()
			}
		}}
	case "redsync-rueidis":
		// rueidis at its defaults (client-side caching on, auto-pipelining),
		// through the go-redis-like adapter that redsync's own adapter takes.
		var pools []rsredis.Pool
		var clients []rueidis.Client
		for _, a := range addrs {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{a}})
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
			pools = append(pools, rsrueidis.NewPool(rueidiscompat.NewAdapter(c)))
		}
		im = redsyncImpl{rs: redsync.New(pools...), closers: func() {
			for _, c := range clients {
				c.Close()
			}
		}}
	case "redsync-valkey":
		// valkey-go at its defaults, as redsync-rueidis.
		var pools []rsredis.Pool
		var clients []valkey.Client
		for _, a := range addrs {
			c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{a}})
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
			pools = append(pools, rsvalkey.NewPool(valkeycompat.NewAdapter(c)))
		}
		im = redsyncImpl{rs: redsync.New(pools...), closers: func() {
			for _, c := range clients {
				c.Close()
			}
		}}
	case "rueidislock-rueidis":
		// rueidislock at its defaults: a majority of 2 of 3 keys on the one
		// server, 5s validity extended every 2.5s, client-side caching
		// without NOLOOP to hear of releases.
		if len(addrs) != 1 {
			t.Fatalf("%s runs on one server, not %d", name, len(addrs))
		}
		l, err := rueidislock.NewLocker(rueidislock.LockerOption{
			ClientOption: rueidis.ClientOption{InitAddress: addrs},
		})
		if err != nil {
			t.Fatal(err)
		}
		im = rueidisLock{l}
	default:
		t.Fatalf("unknown implementation %q", name)
	}
	t.Cleanup(im.close)
	// Warm up: a lock and an unlock dial a connection to every node. (The
	// waiting lock: on an overloaded machine, a dial may overrun our node
	// timeout.)
	var r [6]byte
	rand.Read(r[:])
	m := im.mutex("bench/warm-up/" + name + "/" + hex.EncodeToString(r[:]))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.lock(ctx); err != nil {
		t.Fatalf("%s: warm-up: %v", name, err)
	}
	if err := m.unlock(ctx); err != nil {
		t.Fatalf("%s: warm-up: %v", name, err)
	}
	return im
}

// ours is a distlock client; each acquisition is a new *lock.Lock.
type ours struct{ c *lock.Client }

func (o ours) mutex(key string) mutex { return &oursMutex{c: o.c, key: key} }
func (o ours) stats() lock.Stats      { return o.c.Stats() }
func (o ours) close()                 { o.c.Close() }

type oursMutex struct {
	c   *lock.Client
	key string
	l   *lock.Lock
}

func (m *oursMutex) tryLock(ctx context.Context) (err error) {
	m.l, err = m.c.TryAcquire(ctx, m.key)
	return err
}

func (m *oursMutex) lock(ctx context.Context) (err error) {
	m.l, err = m.c.Acquire(ctx, m.key)
	return err
}

func (m *oursMutex) unlock(ctx context.Context) error { return m.l.Release(ctx) }

// redsyncImpl is redsync; one *redsync.Mutex serves all of a goroutine's
// acquisitions of its key (cheaper than one per acquisition).
type redsyncImpl struct {
	rs      *redsync.Redsync
	closers func()
}

func (r redsyncImpl) mutex(key string) mutex { return rsMutex{r.rs.NewMutex(key)} }
func (r redsyncImpl) close()                 { r.closers() }

type rsMutex struct{ m *redsync.Mutex }

func (m rsMutex) tryLock(ctx context.Context) error { return m.m.TryLockContext(ctx) }
func (m rsMutex) lock(ctx context.Context) error    { return m.m.LockContext(ctx) }

var errUnlock = errors.New("redsync: unlock reached no quorum")

func (m rsMutex) unlock(ctx context.Context) error {
	ok, err := m.m.UnlockContext(ctx)
	if !ok && err == nil {
		err = errUnlock
	}
	return err
}

// rueidisLock is rueidislock. A lock is a context that stays alive while
// the locker holds the key, and its cancel function releases it.
type rueidisLock struct{ l rueidislock.Locker }

func (r rueidisLock) mutex(key string) mutex { return &rlMutex{l: r.l, key: key} }
func (r rueidisLock) close()                 { r.l.Close() }

// rlMutex keeps the context and cancel function of its current lock.
type rlMutex struct {
	l       rueidislock.Locker
	key     string
	held    context.Context
	release context.CancelFunc
}

func (m *rlMutex) tryLock(ctx context.Context) (err error) {
	m.held, m.release, err = m.l.TryWithContext(ctx, m.key)
	return err
}

func (m *rlMutex) lock(ctx context.Context) (err error) {
	m.held, m.release, err = m.l.WithContext(ctx, m.key)
	return err
}

// errLost says that a rueidislock lock ended before its release.
var errLost = errors.New("rueidislock: lock lost before its release")

// unlock releases the lock and waits for its keys' deletion, as
// rueidislock's cancel function does. That function reports nothing, so
// the only failure seen is a lock that had ended before (its context
// done: lost, or expired).
func (m *rlMutex) unlock(context.Context) error {
	lost := m.held.Err()
	m.release()
	if lost != nil {
		return errLost
	}
	return nil
}
