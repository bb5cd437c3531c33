package benchmark

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// redrawEvery is how often a terminal's bar is redrawn.
const redrawEvery = 100 * time.Millisecond

// barWidth is the number of cells of the bar.
const barWidth = 24

// Progress reports a run's progress on a writer: on a terminal, a bar
// redrawn in place; elsewhere, a line per step. Its methods are safe for
// concurrent use.
type Progress struct {
	w   io.Writer
	bar bool
	now func() time.Time

	mu     sync.Mutex
	total  int           // steps in the run
	done   int           // steps finished
	step   string        // the current step, "" before the first
	began  time.Time     // when the current step began
	length time.Duration // how long the current step should take
	start  time.Time     // when the run began
	drawn  bool          // a bar is on the screen
	stop   chan struct{} // closed by Finish to end the redrawing
	ended  chan struct{} // closed when the redrawing has ended
}

// NewProgress returns a Progress that writes to w, drawing a bar if bar
// is set (see [IsTerminal]) and printing lines otherwise.
func NewProgress(w io.Writer, bar bool) *Progress {
	return &Progress{w: w, bar: bar, now: time.Now}
}

// IsTerminal reports whether f is a terminal that a bar may be drawn on
// (not when TERM is "dumb").
func IsTerminal(f *os.File) bool {
	return os.Getenv("TERM") != "dumb" && isTerminal(f)
}

// Begin starts a run of total steps.
func (p *Progress) Begin(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.start = total, p.now()
	if p.bar && p.stop == nil {
		p.stop, p.ended = make(chan struct{}), make(chan struct{})
		go p.redraw(p.stop, p.ended)
	}
}

// Step says that the step named name begins, and should take about d.
// The previous step, if any, is done.
func (p *Progress) Step(name string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.step != "" {
		p.done++
	}
	p.step, p.began, p.length = name, p.now(), d
	if p.bar {
		p.draw()
		return
	}
	fmt.Fprintf(p.w, "bench: [%d/%d] %s (%v)\n", p.done+1, p.total, name, d)
}

// Logf prints a line of its own, above the bar on a terminal.
func (p *Progress) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, "bench: "+format+"\n", args...)
	if p.bar && p.step != "" {
		p.draw()
	}
}

// Finish ends the run: the bar is cleared, and a line says how long the
// run took.
func (p *Progress) Finish() {
	p.mu.Lock()
	stop, ended := p.stop, p.ended
	p.stop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-ended
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.step != "" {
		p.done++
		p.step = ""
	}
	p.clear()
	fmt.Fprintf(p.w, "bench: %d of %d measurements in %v\n", p.done, p.total, p.now().Sub(p.start).Round(100*time.Millisecond))
}

func (p *Progress) redraw(stop <-chan struct{}, ended chan<- struct{}) {
	defer close(ended)
	t := time.NewTicker(redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.step != "" {
				p.draw()
			}
			p.mu.Unlock()
		}
	}
}

// draw draws the bar over the line it is on. The caller holds p.mu.
func (p *Progress) draw() {
	fmt.Fprint(p.w, "\r\x1b[K"+p.barLine())
	p.drawn = true
}

// clear erases the bar, if one is drawn. The caller holds p.mu.
func (p *Progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// barLine returns the bar's text: the share of the run done, the step and
// its time. The caller holds p.mu.
func (p *Progress) barLine() string {
	elapsed := p.now().Sub(p.began)
	part := 1.0
	if p.length > 0 {
		part = min(1, float64(elapsed)/float64(p.length))
	}
	share := 0.0
	if p.total > 0 {
		share = min(1, (float64(p.done)+part)/float64(p.total))
	}
	cells := int(share * barWidth)
	return fmt.Sprintf("[%s%s] %d/%d %s %.1fs/%v", strings.Repeat("#", cells), strings.Repeat(".", barWidth-cells),
		p.done+1, p.total, p.step, elapsed.Seconds(), p.length)
}

// Logger returns a logger whose records p prints as [Progress.Logf] does
// (above the bar), for the warnings of the clients measured.
func (p *Progress) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(logLines{p}, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{} // the bar's lines have no time either
			}
			return a
		},
	}))
}

// logLines writes each line a slog handler writes through a Progress.
type logLines struct{ p *Progress }

func (l logLines) Write(b []byte) (int, error) {
	l.p.Logf("%s", strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}
