package benchmark

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock"
)

// The shape of the faults section.
const (
	FaultGoroutines = 4                      // goroutines of the steady load, a key each
	FaultTTL        = 2 * time.Second        // the load's locks' TTL
	FaultBucket     = 100 * time.Millisecond // the timeline's resolution
	faultOpTimeout  = time.Second            // bounds each acquisition and each release
	recoveryWindow  = time.Second            // the window that must be back at the normal rate
	recoveryShare   = 0.8                    // of the rate before the fault
	faultStartLimit = 30 * time.Second       // bounds starting a server again
)

// FaultPlan is the faults section of a [Plan]: for each networked driver
// measured, a steady load of acquisitions through one fault that fits its
// topology, on servers that ServersDir's [FaultsFolder] names.
type FaultPlan struct {
	ServersDir string
	Before     time.Duration // the load before the fault (zero: 3s)
	Limit      time.Duration // the longest the load goes on after the fault, waiting for recovery (zero: 15s)
}

func (fp FaultPlan) before() time.Duration { return cmp.Or(fp.Before, 3*time.Second) }
func (fp FaultPlan) limit() time.Duration  { return cmp.Or(fp.Limit, 15*time.Second) }

// FaultResult is what one driver's fault did to a steady load of
// acquisitions: [FaultGoroutines] goroutines doing TryAcquire and Release
// on keys of their own.
type FaultResult struct {
	Driver string `json:"driver"`
	// Fault says what was done ("killed redis-7001 (1 of 5 masters)..."),
	// Note why nothing was ("no fault: not in --servers-dir"), and Error
	// what went wrong.
	Fault string `json:"fault,omitempty"`
	// Summary is Fault in a few words, for the table: "killed etcd-2,
	// the leader (1 of 3)", "restarted postgres".
	Summary string `json:"summary,omitempty"`
	Note    string `json:"note,omitempty"`
	Error   string `json:"error,omitempty"`
	// Durability is how the servers keep what they acknowledged, as
	// --servers-dir says.
	Durability string `json:"durability,omitempty"`
	Ops        int64  `json:"ops"`    // acquire+release cycles that succeeded
	Failed     int64  `json:"failed"` // that failed
	// FailedBy counts the failures by class: unavailable, timeout,
	// misconfigured, not held, held (by another: never right on keys of
	// one's own), other.
	FailedBy map[string]int64 `json:"failed_by,omitempty"`
	// LastErrorBy is the last error of each class of FailedBy.
	LastErrorBy map[string]string `json:"last_error_by,omitempty"`
	LastError   string            `json:"last_error,omitempty"`
	// BeforePerSecond is the median of the 1s windows before the fault.
	BeforePerSecond float64 `json:"before_per_second"`
	// LongestGapMS is the longest time in which no acquisition succeeded.
	LongestGapMS float64 `json:"longest_gap_ms"`
	// RecoveryMS is the time from the fault to the start of the first 1s
	// window with 80% or more of BeforePerSecond, whose first 100ms has
	// half of it or more; nil if none came before the limit.
	RecoveryMS *float64 `json:"recovery_ms"`
	// BackMS is, for a server restarted, the time from the fault until it
	// answered again.
	BackMS *float64 `json:"server_back_ms,omitempty"`
	// FaultAtMS is the fault's time on the timeline, from the load's start.
	FaultAtMS float64 `json:"fault_at_ms"`
	// BucketMS is the timeline's resolution; Successes and Failures count
	// the operations that ended in each bucket.
	BucketMS  int     `json:"bucket_ms"`
	Successes []int64 `json:"successes"`
	Failures  []int64 `json:"failures"`
	// Restored is false when a server killed could not be started again:
	// Error says why.
	Restored bool `json:"restored"`
}

// HasFault reports whether a fault was injected and measured.
func (fr FaultResult) HasFault() bool { return fr.Fault != "" && fr.Error == "" }

// measureFault runs the faults section for target t, on a client of its
// own that logs to log.
func measureFault(ctx context.Context, t Target, fp FaultPlan, keys *Keys, log *slog.Logger) (fr FaultResult) {
	fr = FaultResult{Driver: t.Driver, BucketMS: int(FaultBucket / time.Millisecond), Restored: true}
	if errNoFaults != nil {
		fr.Note = errNoFaults.Error()
		return fr
	}
	sf, err := ReadServerFile(fp.ServersDir, t.Driver)
	switch {
	case errors.Is(err, errNotInServersDir):
		fr.Note = err.Error()
		return fr
	case err != nil:
		fr.Error = err.Error()
		return fr
	}
	fr.Durability = sf.Durability
	servers := sf.Reached(t.DSN)
	if len(servers) == 0 {
		fr.Note = "no fault: its DSN names none of the servers of --servers-dir"
		return fr
	}
	c, err := open(ctx, t.Driver, t.DSN, log)
	if err != nil {
		fr.Error = "open a client: " + err.Error()
		return fr
	}
	defer c.Close()
	inj := &injector{driver: t.Driver, dsn: t.DSN, servers: servers, client: c}
	defer func() {
		// Every server killed runs again when bench ends, whatever happens.
		if err := inj.restore(ctx); err != nil {
			fr.Restored = false
			fr.Error = strings.TrimPrefix(fr.Error+"; "+err.Error(), "; ")
		}
	}()
	return runFault(ctx, c, keys, fp, inj, fr)
}

// runFault runs the load on c, with inj's fault after fp's Before, until
// the rate is back or fp's Limit passed, and fills in fr.
func runFault(ctx context.Context, c *lock.Client, keys *Keys, fp FaultPlan, inj faultInjector, fr FaultResult) FaultResult {
	before, limit := fp.before(), fp.limit()
	ld := newLoad(before + limit + 2*recoveryWindow)
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	for range FaultGoroutines {
		wg.Go(func() { ld.run(loadCtx, c, keys) })
	}
	defer wg.Wait()
	defer stopLoad()

	if sleep(ctx, before); ctx.Err() != nil {
		return ld.result(fr, -1, nil)
	}
	faultAt := time.Since(ld.start)
	desc, back, err := inj.inject(ctx)
	fr.Fault, fr.Summary = desc, inj.summarize()
	if err != nil {
		fr.Error = err.Error()
		stopLoad()
		wg.Wait()
		return ld.result(fr, faultAt, nil)
	}
	// The load goes on until a whole window at the normal rate has passed
	// since the fault, and the server restarted answers, or the limit.
	median := ld.median(faultAt)
	deadline := faultAt + limit
	for ctx.Err() == nil {
		now := time.Since(ld.start)
		if rec, ok := ld.recovery(faultAt, now, median); ok && back.done() && now >= faultAt+rec+recoveryWindow {
			break
		}
		if now >= deadline {
			break
		}
		sleep(ctx, FaultBucket)
	}
	stopLoad()
	wg.Wait()
	return ld.result(fr, faultAt, back)
}

// faultInjector injects a fault. inject returns what it did, and for a
// server restarted, when it answered again.
type faultInjector interface {
	inject(ctx context.Context) (string, *backTime, error)
	summarize() string // the fault in a few words
}

func (inj *injector) summarize() string { return inj.summary }

// backTime is when a server restarted answered again, set once.
type backTime struct {
	start time.Time     // the fault
	at    atomic.Int64  // nanoseconds from start; 0 until then
	fin   chan struct{} // closed when the restart ended, answering or not
}

func newBackTime() *backTime { return &backTime{start: time.Now(), fin: make(chan struct{})} }

// done reports whether the restart ended (nil: nothing to wait for).
func (b *backTime) done() bool {
	if b == nil {
		return true
	}
	select {
	case <-b.fin:
		return true
	default:
		return false
	}
}

// load is the steady load: operations counted per bucket of the
// timeline, and the times of successes. It is safe for concurrent use.
type load struct {
	start     time.Time
	successes []atomic.Int64
	failures  []atomic.Int64

	mu        sync.Mutex
	okAt      []time.Duration // when each success ended, from start
	failedBy  map[string]int64
	lastBy    map[string]string // the last error of each class
	lastError error
}

func newLoad(span time.Duration) *load {
	n := int(span/FaultBucket) + 1
	return &load{start: time.Now(), successes: make([]atomic.Int64, n), failures: make([]atomic.Int64, n),
		failedBy: make(map[string]int64), lastBy: make(map[string]string)}
}

// run is one goroutine of the load, until ctx ends: TryAcquire and
// Release on a key of its own, a new key after a failure (the old one may
// stay held by a request the backend carried out after the client gave
// up).
func (ld *load) run(ctx context.Context, c *lock.Client, keys *Keys) {
	key := keys.Next("faults")
	for ctx.Err() == nil {
		err := ld.cycle(ctx, c, key)
		at := time.Since(ld.start)
		if ctx.Err() != nil {
			return // cut short by the end: not counted
		}
		i := min(int(at/FaultBucket), len(ld.successes)-1)
		if err == nil {
			ld.successes[i].Add(1)
			ld.mu.Lock()
			ld.okAt = append(ld.okAt, at)
			ld.mu.Unlock()
			continue
		}
		ld.failures[i].Add(1)
		ld.mu.Lock()
		class := failureClass(err)
		ld.failedBy[class]++
		ld.lastBy[class] = err.Error()
		ld.lastError = err
		ld.mu.Unlock()
		key = keys.Next("faults")
		sleep(ctx, failurePause)
	}
}

// cycle takes key and releases it, each under a timeout of its own.
func (ld *load) cycle(ctx context.Context, c *lock.Client, key string) error {
	actx, cancel := context.WithTimeout(ctx, faultOpTimeout)
	defer cancel()
	l, err := c.TryAcquire(actx, key, lock.WithTTL(FaultTTL))
	if err != nil {
		return err
	}
	rctx, cancelR := context.WithTimeout(context.WithoutCancel(ctx), faultOpTimeout)
	defer cancelR()
	return l.Release(rctx)
}

// failureClass names the class of a failed operation's error.
func failureClass(err error) string {
	switch {
	case errors.Is(err, lock.ErrNotAcquired):
		return "held"
	case errors.Is(err, lock.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, lock.ErrMisconfigured):
		return "misconfigured"
	case errors.Is(err, lock.ErrNotHeld):
		return "not held"
	}
	return "other"
}

// sum returns the successes in the buckets from i, for d.
func (ld *load) sum(i int, d time.Duration) int64 {
	var n int64
	for j := i; j < i+int(d/FaultBucket) && j < len(ld.successes); j++ {
		n += ld.successes[j].Load()
	}
	return n
}

// median returns the median of the successes of the whole 1s windows
// before faultAt, per second.
func (ld *load) median(faultAt time.Duration) float64 {
	per := int(recoveryWindow / FaultBucket)
	var ws []int64
	for i := 0; (i+per)*int(FaultBucket) <= int(faultAt); i += per {
		ws = append(ws, ld.sum(i, recoveryWindow))
	}
	if len(ws) == 0 {
		return 0
	}
	slices.Sort(ws)
	m := float64(ws[len(ws)/2])
	if len(ws)%2 == 0 {
		m = float64(ws[len(ws)/2-1]+ws[len(ws)/2]) / 2
	}
	return m / recoveryWindow.Seconds()
}

// recovery returns the time from faultAt to the start of the first whole
// 1s window, of those ended by now, with recoveryShare of median or more,
// and whose first bucket has half of median or more: a window that starts
// while nothing succeeds is not back, even if a burst after fills it. Windows
// start at the buckets' bounds, from the one the fault is in: a window
// that starts before the fault counts as starting at it.
func (ld *load) recovery(faultAt, now time.Duration, median float64) (time.Duration, bool) {
	want := recoveryShare * median * recoveryWindow.Seconds()
	wantFirst := median / 2 * FaultBucket.Seconds()
	for i := int(faultAt / FaultBucket); time.Duration(i)*FaultBucket+recoveryWindow <= now; i++ {
		if float64(ld.sum(i, recoveryWindow)) >= want && float64(ld.successes[i].Load()) >= wantFirst {
			return max(0, time.Duration(i)*FaultBucket-faultAt), true
		}
	}
	return 0, false
}

// result fills in fr's figures; faultAt is -1 when the run was
// interrupted before the fault.
func (ld *load) result(fr FaultResult, faultAt time.Duration, back *backTime) FaultResult {
	end := time.Since(ld.start)
	whole := min(int(end/FaultBucket), len(ld.successes)) // the timeline leaves the last bucket out, cut short
	for i := range ld.successes {
		ok, failed := ld.successes[i].Load(), ld.failures[i].Load()
		fr.Ops, fr.Failed = fr.Ops+ok, fr.Failed+failed
		if i < whole {
			fr.Successes, fr.Failures = append(fr.Successes, ok), append(fr.Failures, failed)
		}
	}
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if len(ld.failedBy) > 0 {
		fr.FailedBy, fr.LastErrorBy = ld.failedBy, ld.lastBy
	}
	if ld.lastError != nil {
		fr.LastError = ld.lastError.Error()
	}
	fr.LongestGapMS = ms(longestGap(ld.okAt, end))
	if faultAt < 0 {
		return fr
	}
	fr.FaultAtMS = ms(faultAt)
	fr.BeforePerSecond = ld.median(faultAt)
	if rec, ok := ld.recovery(faultAt, end, fr.BeforePerSecond); ok && fr.BeforePerSecond > 0 {
		v := ms(rec)
		fr.RecoveryMS = &v
	}
	if back != nil {
		if at := back.at.Load(); at > 0 {
			v := ms(time.Duration(at))
			fr.BackMS = &v
		}
	}
	return fr
}

// longestGap returns the longest time between successes, and from the
// start to the first and from the last to end.
func longestGap(okAt []time.Duration, end time.Duration) time.Duration {
	sort.Slice(okAt, func(i, j int) bool { return okAt[i] < okAt[j] })
	var gap, prev time.Duration
	for _, t := range okAt {
		gap, prev = max(gap, t-prev), t
	}
	return max(gap, end-prev)
}

// injector kills one of a driver's servers: the only one, started again
// at once; or one member of several (the leader where they tell it),
// started again when restore runs.
type injector struct {
	driver, dsn string
	servers     []Server
	client      *lock.Client

	summary string // the fault in a few words, once injected

	mu     sync.Mutex
	killed []Server // not started again yet
	done   chan struct{}
}

// inject kills a server, and starts a lone one again in the background.
func (inj *injector) inject(ctx context.Context) (string, *backTime, error) {
	if len(inj.servers) == 1 {
		s := inj.servers[0]
		if err := inj.kill(s); err != nil {
			return "", nil, err
		}
		back := newBackTime()
		inj.done = make(chan struct{})
		go func() {
			defer close(inj.done)
			defer close(back.fin)
			if inj.startAgain(ctx, s) == nil && inj.answers(ctx) {
				back.at.Store(int64(time.Since(back.start)))
			}
		}()
		inj.summary = "restarted " + s.Name
		return fmt.Sprintf("%s killed (SIGKILL), started again at once", s.Name), back, nil
	}
	i, how, lead := leader(ctx, inj.driver, inj.dsn, inj.servers)
	// A member that is down already (another test's fault, say) is passed
	// over for the next one that runs.
	for j := range inj.servers {
		if _, err := serverPID(inj.servers[(i+j)%len(inj.servers)]); err == nil {
			if j > 0 {
				how, lead = inj.servers[i].Name+" was down already: the next that runs", false
			}
			i = (i + j) % len(inj.servers)
			break
		}
	}
	s := inj.servers[i]
	if err := inj.kill(s); err != nil {
		return "", nil, err
	}
	inj.summary = fmt.Sprintf("killed %s (1 of %d)", s.Name, len(inj.servers))
	if lead {
		inj.summary = fmt.Sprintf("killed %s, the leader (1 of %d)", s.Name, len(inj.servers))
	}
	return fmt.Sprintf("%s killed (SIGKILL; 1 of %d, %s), started again at the end", s.Name, len(inj.servers), how), nil, nil
}

// kill kills s, and records it as to be started again. A server that
// does not run, or whose PID is not its own, is not killed, and so not
// started either.
func (inj *injector) kill(s Server) error {
	if _, err := serverPID(s); err != nil {
		return err
	}
	inj.mu.Lock()
	defer inj.mu.Unlock()
	// Recorded first: a kill that failed half-way is still restored.
	inj.killed = append(inj.killed, s)
	return killServer(s)
}

// startAgain runs s's launcher until it succeeds, for up to
// faultStartLimit (a database killed a moment ago may still hold what
// the new one needs), even when ctx was cancelled.
func (inj *injector) startAgain(ctx context.Context, s Server) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), faultStartLimit)
	defer cancel()
	var err error
	for {
		if _, running := serverPID(s); running == nil {
			err = nil
			break
		}
		if err = startServer(ctx, s); err == nil {
			break
		}
		if sleep(ctx, 200*time.Millisecond); ctx.Err() != nil {
			break
		}
	}
	if err == nil {
		inj.mu.Lock()
		inj.killed = slices.DeleteFunc(inj.killed, func(k Server) bool { return k == s })
		inj.mu.Unlock()
	}
	return err
}

// answers waits until the backend answers a ping, for up to
// faultStartLimit.
func (inj *injector) answers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), faultStartLimit)
	defer cancel()
	for {
		pctx, cancelP := context.WithTimeout(ctx, faultOpTimeout)
		err := inj.client.Ping(pctx)
		cancelP()
		if err == nil {
			return true
		}
		if sleep(ctx, 50*time.Millisecond); ctx.Err() != nil {
			return false
		}
	}
}

// restore starts every server killed and not yet started again, and waits
// until each serves, even when ctx was cancelled.
func (inj *injector) restore(ctx context.Context) error {
	if inj.done != nil {
		<-inj.done
	}
	inj.mu.Lock()
	killed := slices.Clone(inj.killed)
	inj.mu.Unlock()
	var errs []error
	for _, s := range killed {
		if err := inj.startAgain(ctx, s); err != nil {
			errs = append(errs, err)
			continue
		}
		if !inj.servesAgain(ctx, s) {
			errs = append(errs, fmt.Errorf("%s started again, but did not serve within %v", s.Name, faultStartLimit))
		}
	}
	return errors.Join(errs...)
}

// servesAgain waits until s serves its cluster, for up to faultStartLimit.
func (inj *injector) servesAgain(ctx context.Context, s Server) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), faultStartLimit)
	defer cancel()
	for !serving(ctx, inj.driver, s) {
		if sleep(ctx, 100*time.Millisecond); ctx.Err() != nil {
			return false
		}
	}
	return true
}
