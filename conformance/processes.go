package conformance

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
	"golang.org/x/sys/unix"
)

// Processes describes a run of [RunProcesses]. In a run, worker processes
// contend for keys while a nemesis breaks the backend and pauses holders.
type Processes struct {
	// Open opens a client in a worker process. Required.
	Open func(t testing.TB) *lock.Client

	Workers  int           // processes contending; default 4
	Keys     int           // keys they contend for; default 2
	Duration time.Duration // of the contention; default 10s
	TTL      time.Duration // of every lock; default 2s
	Fenced   bool          // the driver issues fencing tokens: check their order

	// Permits, if above 0, makes the workers take permits of semaphores of
	// that many (one semaphore per key) instead of locks. Each slot is
	// checked as a lock, with a register of its own, and each semaphore
	// for more than Permits holdings at once (see History.PermitViolations).
	Permits int

	// Faults, if not nil, is what the nemesis breaks. It hangs and kills
	// minorities of nodes (and majorities, with Majority). It restarts a
	// killed node only after a TTL, as Redlock requires.
	Faults   Faults
	Majority bool

	// PauseHolders lets the nemesis stop a worker process (SIGSTOP) for
	// 1.5 TTLs, then resume it. That makes a holder paused past its TTL.
	PauseHolders bool

	// Actions are more faults for the nemesis to choose from, by name. Each
	// breaks something (slows a link, resets connections) and mends it
	// before it returns. They run on the test's goroutine.
	Actions map[string]func(t *testing.T)

	// Leftovers, if not nil, counts the locks the backend still holds on
	// the run's keys. Those are keys, rows with a live lease, or nodes, but
	// not what a driver keeps by design, such as a key's fencing counter.
	// Leftovers is called once the workers have ended, when every lock was
	// released or given up. If anything is left then, it is called again a
	// TTL and a half later, when nothing may be (see
	// ProcessReport.LeftAfterTTL).
	Leftovers func(t *testing.T) int
}

// ProcessReport is what a run of RunProcesses saw.
type ProcessReport struct {
	Acquired, Failed   int            // acquisitions, and attempts that failed with an error
	Faults             map[string]int // the nemesis's actions, by kind
	Overlaps           int            // pairs of holdings of one key (a semaphore's slot) whose validity windows overlap
	OverPermits        int            // holdings that began while Processes.Permits others of their semaphore were held
	MostHolders        int            // the most holdings of one semaphore at once, if Processes.Permits
	ExpiredAtReturn    int            // locks whose validity had passed when Acquire returned them
	Regressions        int            // tokens that did not grow (fenced drivers)
	Writes, LostWrites int            // register writes under the lock, and those a concurrent holder overwrote
	StaleRefused       int            // writes of a token older than the register's, refused (a paused holder's)
	LeftoversCounted   bool           // Processes.Leftovers was given
	LeftAtEnd          int            // locks the backend held when the workers had ended (a release that failed under a fault)
	LeftAfterTTL       int            // and a TTL and a half later: a leak, unless 0
	LongestUnavailable time.Duration  // the longest time without any acquisition
	Report             string         // the offending holdings, if any
	WorkerErrors       []string       // workers that did not finish cleanly
	FailedErrors       []string       // the first few distinct errors of failed attempts, with their workers
	Took               time.Duration  // the whole run
	AcquiredPerSecond  float64
}

// workerConfig is what a worker process is told of the run.
type workerConfig struct {
	Keys     int
	Duration time.Duration
	TTL      time.Duration
	Permits  int
}

// Environment of a worker process.
const (
	envWorker       = "DISTLOCK_CONFORMANCE_WORKER" // its index
	envWorkerDir    = "DISTLOCK_CONFORMANCE_DIR"    // where it writes its records, and the registers are
	envWorkerConfig = "DISTLOCK_CONFORMANCE_CONFIG" // its workerConfig, as JSON
	envWorkerName   = "DISTLOCK_CONFORMANCE_NAME"   // SharedName's
	// EnvWorkerOf is set in every worker process. testenv.Main does not
	// take the servers' locks when it is set, since the parent test holds
	// them.
	EnvWorkerOf = "DISTLOCK_WORKER_OF"
)

// sharedName is Shared's value in the parent, for its workers.
var sharedName string

// Shared returns value in the parent test, and passes it to the worker
// processes of its next RunProcesses. There Shared returns the parent's
// value, whatever it is given. It is for what they must agree on that only
// the parent knows (a proxy's address, a random name). Call it once per
// run, before RunProcesses.
func Shared(value string) string {
	if InWorker() {
		return os.Getenv(envWorkerName)
	}
	sharedName = value
	return value
}

// SharedName is Shared of prefix and random hex digits. It names what the
// parent and its workers share (a table, a key prefix).
func SharedName(prefix string) string {
	return Shared(prefix + strconv.FormatUint(rand.Uint64()&0xffffffffff, 16))
}

// InWorker reports whether the process is a worker of RunProcesses. The
// test that calls RunProcesses runs again in each worker, up to that call.
func InWorker() bool { return os.Getenv(envWorker) != "" }

// record is one worker's line for one holding, or a failed attempt. Times
// are CLOCK_MONOTONIC nanoseconds, which every process of the machine
// shares.
type record struct {
	Worker int    `json:"w"`
	Key    string `json:"k,omitempty"`
	From   int64  `json:"from,omitempty"`
	To     int64  `json:"to,omitempty"`
	Token  uint64 `json:"tok,omitempty"`
	Fenced bool   `json:"fenced,omitempty"`
	Write  string `json:"write,omitempty"` // "ok", "late" (ended past the validity), "stale" (refused), or "" (not written: validity too short)
	Err    string `json:"err,omitempty"`   // of a failed attempt
	At     int64  `json:"at,omitempty"`    // of a failed attempt

	Expired bool `json:"expired,omitempty"` // the lock's validity had passed when Acquire returned it
}

// monoBase relates this process's time.Time readings to CLOCK_MONOTONIC.
// It is a reading of that clock, taken at monoAt. The two readings cannot
// be taken at once. A process descheduled between them (on a loaded
// machine, for milliseconds) would shift all its times by that much
// against the other processes'. So of 200 tries, it keeps the one whose
// time.Now readings before and after bracket the clock's reading most
// tightly, and takes their middle.
var monoBase, monoAt = func() (int64, time.Time) {
	var (
		best    int64
		bestAt  time.Time
		bestGap time.Duration = -1
		ts      unix.Timespec
	)
	for range 200 {
		before := time.Now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			panic("conformance: CLOCK_MONOTONIC: " + err.Error())
		}
		gap := time.Since(before)
		if bestGap < 0 || gap < bestGap {
			best, bestAt, bestGap = ts.Nano(), before.Add(gap/2), gap
		}
	}
	return best, bestAt
}()

// mono returns t on CLOCK_MONOTONIC, in nanoseconds.
func mono(t time.Time) int64 { return monoBase + int64(t.Sub(monoAt)) }

// RunProcesses runs p.Workers copies of the calling test's binary as
// worker processes, each opening a client with p.Open and contending for
// p.Keys keys for p.Duration. Every holding reads a register (a file per
// key) and pauses up to a millisecond. If its validity has more than a
// tenth of the TTL left, it then writes the register back incremented,
// with its token. The register refuses a token older than its own (a
// paused holder's). A write lost to a concurrent holder shows as a count
// below the writes. Meanwhile the nemesis breaks p.Faults's nodes and
// pauses workers on a random schedule, and mends all before the end.
// RunProcesses returns what the records show. The caller decides what
// must hold (see ProcessReport).
//
// In a worker process (the same test, run again by RunProcesses), it runs
// the worker and exits the process.
func RunProcesses(t *testing.T, p Processes) ProcessReport {
	p = p.withDefaults()
	if idx := os.Getenv(envWorker); idx != "" {
		runWorker(t, p, idx)
		os.Exit(0)
	}
	dir := t.TempDir()
	cfg, _ := json.Marshal(workerConfig{Keys: p.Keys, Duration: p.Duration, TTL: p.TTL, Permits: p.Permits})
	start := time.Now()
	workers := make([]*exec.Cmd, p.Workers)
	for i := range workers {
		cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.timeout="+(p.Duration+2*time.Minute).String())
		cmd.Env = append(os.Environ(), envWorker+"="+strconv.Itoa(i), envWorkerDir+"="+dir, envWorkerConfig+"="+string(cfg), envWorkerName+"="+sharedName, EnvWorkerOf+"=1")
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.out", i)))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
		// Should the test process die (a timeout, a kill), so do its
		// workers, even one the nemesis left stopped.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting worker %d: %v", i, err)
		}
		workers[i] = cmd
	}
	defer func() { // should the test stop early
		for _, w := range workers {
			w.Process.Signal(syscall.SIGCONT)
			w.Process.Kill()
		}
	}()
	faults := nemesis(t, p, dir, workers, start.Add(p.Duration-p.TTL))
	var rep ProcessReport
	for i, w := range workers {
		if err := w.Wait(); err != nil {
			out, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("worker-%d.out", i)))
			rep.WorkerErrors = append(rep.WorkerErrors, fmt.Sprintf("worker %d: %v\n%s", i, err, tailOf(out, 2000)))
		}
	}
	rep.Took = time.Since(start)
	rep.Faults = faults
	check(t, p, dir, &rep)
	if p.Leftovers != nil {
		rep.LeftoversCounted = true
		rep.LeftAtEnd = p.Leftovers(t)
		if rep.LeftAtEnd > 0 {
			time.Sleep(p.TTL * 3 / 2)
			rep.LeftAfterTTL = p.Leftovers(t)
		}
	}
	return rep
}

func (p Processes) withDefaults() Processes {
	if p.Workers <= 0 {
		p.Workers = 4
	}
	if p.Keys <= 0 {
		p.Keys = 2
	}
	if p.Duration <= 0 {
		p.Duration = 10 * time.Second
	}
	if p.TTL <= 0 {
		p.TTL = 2 * time.Second
	}
	if c := os.Getenv(envWorkerConfig); c != "" {
		var w workerConfig
		if json.Unmarshal([]byte(c), &w) == nil {
			p.Keys, p.Duration, p.TTL, p.Permits = w.Keys, w.Duration, w.TTL, w.Permits
		}
	}
	return p
}

// runPattern is a -test.run pattern for exactly the test named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, s := range parts {
		parts[i] = "^" + regexp.QuoteMeta(s) + "$"
	}
	return strings.Join(parts, "/")
}

// String is the report in a paragraph.
func (r ProcessReport) String() string {
	kinds := make([]string, 0, len(r.Faults))
	for k, n := range r.Faults {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	left := "not counted"
	if r.LeftoversCounted {
		left = fmt.Sprintf("%d at the end, %d a TTL later", r.LeftAtEnd, r.LeftAfterTTL)
	}
	permits := ""
	if r.MostHolders > 0 {
		permits = fmt.Sprintf("; permits: at most %d held at once, %d holdings over the size", r.MostHolders, r.OverPermits)
	}
	return fmt.Sprintf("%d acquisitions in %v (%.0f/s), %d failed attempts; faults: %s; %d overlaps, %d token regressions, %d returned expired; %d register writes, %d lost, %d stale refused; longest without an acquisition %v; locks left behind: %s%s",
		r.Acquired, r.Took.Round(time.Millisecond), r.AcquiredPerSecond, r.Failed, cmp.Or(strings.Join(kinds, ", "), "none"),
		r.Overlaps, r.Regressions, r.ExpiredAtReturn, r.Writes, r.LostWrites, r.StaleRefused, r.LongestUnavailable.Round(time.Millisecond), left, permits)
}

// runWorker is a worker process's life. It contends until the deadline,
// recording every holding and failure.
func runWorker(t *testing.T, p Processes, idx string) {
	i, _ := strconv.Atoi(idx)
	dir := os.Getenv(envWorkerDir)
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d.jsonl", i)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	defer w.Flush()
	enc := json.NewEncoder(w)
	c := p.Open(t)
	defer c.Close()
	rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
	deadline := time.Now().Add(p.Duration)
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(p.TTL))
	defer cancel()
	for time.Now().Before(deadline) {
		key := "procs/" + strconv.Itoa(rng.IntN(p.Keys))
		actx, acancel := context.WithTimeout(ctx, 2*p.TTL)
		l, err := acquireFor(actx, c, key, p)
		acancel()
		if err != nil {
			enc.Encode(record{Worker: i, Err: err.Error(), At: mono(time.Now())})
			w.Flush()
			continue
		}
		from := time.Now()
		expired := !from.Before(l.ValidUntil()) // checked before the nemesis may pause the holder
		marker := filepath.Join(dir, fmt.Sprintf("holding-%d", i))
		os.WriteFile(marker, nil, 0o644) // for the nemesis, which pauses holders
		tok, fenced := l.Token()
		key = l.Key() // a permit's is its slot's
		rec := record{Worker: i, Key: key, From: mono(from), Token: uint64(tok), Fenced: fenced, Expired: expired}
		rec.Write = writeRegister(dir, key, l, p.TTL/10, time.Duration(rng.IntN(1000))*time.Microsecond)
		to := time.Now()
		if vu := l.ValidUntil(); vu.Before(to) {
			to = vu
		}
		rec.To = mono(to)
		os.Remove(marker)
		l.Release(ctx)
		enc.Encode(rec)
		w.Flush()
	}
}

// registerState is a register's file. It holds the count of writes the
// register took and the newest token it saw.
type registerState struct {
	Count int    `json:"count"`
	Token uint64 `json:"token"`
}

// writeRegister reads key's register, pauses, and writes it back
// incremented under l's token if l's validity has more than margin left.
// It returns "ok" for such a write, and "late" for one that ended past the
// validity. It returns "stale" if the register has seen a newer token, and
// "" if it did not write.
func writeRegister(dir, key string, l *lock.Lock, margin, pause time.Duration) string {
	path := filepath.Join(dir, registerFile(key))
	var st registerState
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &st)
	}
	time.Sleep(pause)
	tok, _ := l.Token()
	// The token check and the write are one step (an flock), as a fencing
	// guard's are. The read above is not in that step, so that two holders
	// at once lose a write.
	lf, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return ""
	}
	defer lf.Close()
	syscall.Flock(int(lf.Fd()), syscall.LOCK_EX)
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	if time.Until(l.ValidUntil()) <= margin {
		return ""
	}
	var cur registerState
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &cur)
	}
	if uint64(tok) < cur.Token {
		return "stale"
	}
	// Replaced whole (a rename), so that a read sees the old state or the
	// new, never a file cut short by a writer paused in the middle.
	b, _ := json.Marshal(registerState{Count: st.Count + 1, Token: uint64(tok)})
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if os.WriteFile(tmp, b, 0o644) != nil || os.Rename(tmp, path) != nil {
		return ""
	}
	if time.Now().After(l.ValidUntil()) {
		// The worker was paused between the check and the write, past the
		// validity. The write may have come after another holder's read,
		// which then overwrites it. That is a late write, not the lock's
		// failure.
		return "late"
	}
	return "ok"
}

// nemesis breaks and mends on a random schedule until stop, on the test's
// goroutine, and returns its actions by kind. It deals the kinds like
// cards, every kind once before any twice, so that a short run sees each. It mends everything it broke
// before it returns.
func nemesis(t *testing.T, p Processes, dir string, workers []*exec.Cmd, stop time.Time) map[string]int {
	done := make(map[string]int)
	var kinds []string
	nodes := 0
	if p.Faults != nil {
		nodes = p.Faults.Nodes()
		kinds = append(kinds, "hang-minority", "kill-minority")
		if p.Majority {
			kinds = append(kinds, "hang-majority")
		}
	}
	if p.PauseHolders {
		kinds = append(kinds, "pause-holder")
	}
	for name := range p.Actions {
		kinds = append(kinds, name)
	}
	slices.Sort(kinds[len(kinds)-len(p.Actions):]) // in a map's order, which is random
	if len(kinds) == 0 {
		time.Sleep(time.Until(stop))
		return done
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	minority := max((nodes-1)/2, 1)
	var deck []string
	for {
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		if time.Now().After(stop) {
			return done
		}
		if len(deck) == 0 { // every kind once, in a random order, before any twice
			deck = slices.Clone(kinds)
			rng.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
		}
		kind := deck[len(deck)-1]
		deck = deck[:len(deck)-1]
		done[kind]++
		switch kind {
		case "hang-minority", "hang-majority":
			n := minority
			if kind == "hang-majority" {
				n = nodes/2 + 1
			}
			picked := rng.Perm(nodes)[:n]
			for _, i := range picked {
				p.Faults.Hang(t, i)
			}
			time.Sleep(time.Duration(300+rng.IntN(900)) * time.Millisecond)
			for _, i := range picked {
				p.Faults.Restart(t, i)
			}
		case "kill-minority":
			picked := rng.Perm(nodes)[:minority]
			for _, i := range picked {
				p.Faults.Kill(t, i)
			}
			time.Sleep(p.TTL + 200*time.Millisecond) // a delayed restart: Redlock's rule
			for _, i := range picked {
				p.Faults.Restart(t, i)
			}
		case "pause-holder":
			w := holder(dir, workers, rng, time.Now().Add(time.Second))
			w.Process.Signal(syscall.SIGSTOP)
			time.Sleep(p.TTL * 3 / 2)
			w.Process.Signal(syscall.SIGCONT)
		default:
			p.Actions[kind](t)
		}
	}
}

// holder returns a worker that holds a lock, looking until deadline, and
// a random worker if none did. A worker holds for a moment at a time, and
// on a busy machine the look may come between two holds. A pause of a
// worker that holds nothing tests nothing, and an unsafe variant's check
// could miss its violations.
func holder(dir string, workers []*exec.Cmd, rng *rand.Rand, deadline time.Time) *exec.Cmd {
	for {
		for _, j := range rng.Perm(len(workers)) {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("holding-%d", j))); err == nil {
				return workers[j]
			}
		}
		if time.Now().After(deadline) {
			return workers[rng.IntN(len(workers))]
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// check reads the workers' records and the registers into rep.
func check(t *testing.T, p Processes, dir string, rep *ProcessReport) {
	var h History
	writes, late := make(map[string]int), make(map[string]int)
	var starts []int64
	for i := range p.Workers {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("worker-%d.jsonl", i)))
		if err != nil {
			rep.WorkerErrors = append(rep.WorkerErrors, fmt.Sprintf("worker %d: no records: %v", i, err))
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				continue // a line cut short
			}
			if r.Err != "" {
				rep.Failed++
				if len(rep.FailedErrors) < 4 && !slices.ContainsFunc(rep.FailedErrors, func(e string) bool { return strings.HasSuffix(e, r.Err) }) {
					rep.FailedErrors = append(rep.FailedErrors, fmt.Sprintf("worker %d: %s", r.Worker, r.Err))
				}
				continue
			}
			rep.Acquired++
			if r.Expired {
				rep.ExpiredAtReturn++
			}
			starts = append(starts, r.From)
			if r.To <= r.From {
				// The worker was paused between Acquire's return and its
				// first look at the clock, past the validity. It never
				// held the lock in a moment it could see.
				continue
			}
			h.Add(Hold{Key: r.Key, From: time.Unix(0, r.From), To: time.Unix(0, r.To), Token: fencing.Token(r.Token), Fenced: r.Fenced})
			switch r.Write {
			case "ok":
				writes[r.Key]++
				rep.Writes++
			case "late":
				writes[r.Key]++
				late[r.Key]++
				rep.Writes++
			case "stale":
				rep.StaleRefused++
			}
		}
		f.Close()
	}
	if p.Permits > 0 {
		rep.MostHolders, rep.OverPermits, rep.Overlaps, rep.Regressions, rep.Report = h.PermitViolations(p.Permits, p.Fenced)
	} else {
		rep.Overlaps, rep.Regressions, rep.Report = h.Violations(p.Fenced)
	}
	for key, n := range writes {
		var st registerState
		if b, err := os.ReadFile(filepath.Join(dir, registerFile(key))); err == nil {
			json.Unmarshal(b, &st)
		}
		if lost := n - st.Count - late[key]; lost > 0 {
			rep.LostWrites += lost // more than the late writes can explain
		}
	}
	slices.Sort(starts)
	for i := 1; i < len(starts); i++ {
		rep.LongestUnavailable = max(rep.LongestUnavailable, time.Duration(starts[i]-starts[i-1]))
	}
	if rep.Took > 0 {
		rep.AcquiredPerSecond = float64(rep.Acquired) / rep.Took.Seconds()
	}
}

func tailOf(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// RequireSafe fails t unless rep shows a safe lock. A safe lock has
// workers that finished and acquisitions made. It has no overlap, token
// regression or lost write, and no lock left behind a TTL after the run.
func RequireSafe(t *testing.T, rep ProcessReport) {
	t.Helper()
	if len(rep.WorkerErrors) > 0 {
		t.Errorf("workers failed:\n%s", strings.Join(rep.WorkerErrors, "\n"))
	}
	if rep.Acquired == 0 {
		t.Errorf("no acquisition recorded; failed attempts said:\n%s", strings.Join(rep.FailedErrors, "\n"))
	}
	if rep.Overlaps != 0 || rep.Regressions != 0 || rep.LostWrites != 0 || rep.OverPermits != 0 {
		t.Errorf("%d overlaps, %d token regressions, %d lost writes, %d holdings over a semaphore's size:\n%s", rep.Overlaps, rep.Regressions, rep.LostWrites, rep.OverPermits, rep.Report)
	}
	if rep.ExpiredAtReturn != 0 {
		t.Errorf("%d acquisitions returned a lock whose validity had passed", rep.ExpiredAtReturn)
	}
	if rep.LeftAfterTTL != 0 {
		t.Errorf("%d locks left behind a TTL and a half after the run", rep.LeftAfterTTL)
	}
}

// RequireCaught fails t unless rep shows the violations of an unsafe lock
// (overlaps, regressions or lost writes) in a run whose workers finished.
func RequireCaught(t *testing.T, rep ProcessReport) {
	t.Helper()
	if len(rep.WorkerErrors) > 0 {
		t.Errorf("workers failed:\n%s", strings.Join(rep.WorkerErrors, "\n"))
	}
	if rep.Overlaps+rep.Regressions+rep.LostWrites+rep.OverPermits == 0 {
		t.Errorf("the unsafe variant was not caught: %v", rep)
	}
}

// SoakDuration returns the duration of a soak run, from DISTLOCK_SOAK (for
// instance 5m), or short when it is unset. Fault runs are short in make
// test and CI, and long only when asked for.
func SoakDuration(short time.Duration) time.Duration {
	if s := os.Getenv("DISTLOCK_SOAK"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return short
}
