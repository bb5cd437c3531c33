package benchmark

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer is a strings.Builder safe for the redrawing goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testProgress returns a Progress on a buffer and a clock of the test's.
func testProgress(bar bool) (*Progress, *syncBuffer, *fakeClock) {
	out, clock := &syncBuffer{}, &fakeClock{t: time.Unix(0, 0)}
	p := NewProgress(out, bar)
	p.now = clock.now
	return p, out, clock
}

func TestProgress_plainLinePerStep(t *testing.T) {
	p, out, clock := testProgress(false)
	p.Logf("connecting to %s", "memory")
	p.Begin(2)
	p.Step("memory: uncontended", 2*time.Second)
	clock.advance(2 * time.Second)
	p.Step("memory: 16 keys", 2*time.Second)
	clock.advance(2 * time.Second)
	p.Finish()
	want := "bench: connecting to memory\n" +
		"bench: [1/2] memory: uncontended (2s)\n" +
		"bench: [2/2] memory: 16 keys (2s)\n" +
		"bench: 2 of 2 measurements in 4s\n"
	if got := out.String(); got != want {
		t.Errorf("plain progress:\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(out.String(), "\r") {
		t.Error("plain progress draws over lines")
	}
}

func TestProgress_barRedrawnInPlace(t *testing.T) {
	p, out, clock := testProgress(true)
	p.Begin(4)
	p.Step("postgres: uncontended", 2*time.Second)
	clock.advance(time.Second)
	time.Sleep(3 * redrawEvery) // the bar moves while a step runs
	p.Logf("postgres: 16 keys failed: boom")
	p.Finish()
	got := out.String()
	for _, want := range []string{
		"\r\x1b[K[" + strings.Repeat(".", barWidth) + "] 1/4 postgres: uncontended 0.0s/2s",
		"\r\x1b[K[###" + strings.Repeat(".", barWidth-3) + "] 1/4 postgres: uncontended 1.0s/2s", // 1/8 of the run
		"\r\x1b[Kbench: postgres: 16 keys failed: boom\n\r\x1b[K[###",                            // a line above the bar, then the bar again
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bar output lacks %q:\n%q", want, got)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[Kbench: 1 of 4 measurements in 1s\n") {
		t.Errorf("bar not cleared before the summary:\n%q", got)
	}
	n := len(got)
	time.Sleep(3 * redrawEvery)
	if len(out.String()) != n {
		t.Error("the bar is redrawn after Finish")
	}
}

func TestProgress_barLineFull(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	p := NewProgress(nil, true)
	p.now = clock.now
	p.total, p.done, p.step, p.began, p.length = 2, 1, "last", clock.now(), time.Second
	clock.advance(5 * time.Second) // a step that overran its length fills its share, no more
	if got, want := p.barLine(), "["+strings.Repeat("#", barWidth)+"] 2/2 last 5.0s/1s"; got != want {
		t.Errorf("barLine = %q, want %q", got, want)
	}
}

func TestProgress_loggerPrintsAboveTheBar(t *testing.T) {
	p, out, _ := testProgress(true)
	p.Begin(1)
	p.Step("goredis: 2 of 5 nodes hung", time.Second)
	p.Logger().Warn("lock: cleanup failed", "key", "k")
	p.Finish()
	want := "\r\x1b[Kbench: level=WARN msg=\"lock: cleanup failed\" key=k\n\r\x1b[K["
	if got := out.String(); !strings.Contains(got, want) {
		t.Errorf("a client's warning:\n%q\nwant it to contain\n%q", got, want)
	}
}
