package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/internal/procs"
)

// ElectionName is the election that the workers of [RunElection] campaign
// in.
const ElectionName = "procs/election"

// envGeneration tells a worker of RunElection which life of its slot it
// is: a killed worker is replaced by the next generation.
const envGeneration = "DISTLOCK_CONFORMANCE_GENERATION"

// ElectionReport is what a run of RunElection saw. Its ProcessReport
// counts terms as acquisitions, and overlapping terms as overlaps.
type ElectionReport struct {
	ProcessReport

	// Failovers are the times from each kill of a leader to the next
	// term's election. They are bound by the TTL.
	Failovers []time.Duration

	// Leaders is the number of distinct worker lives that led.
	Leaders int
}

// electionRecord is a worker's line for one term. A term is written when
// it begins, again each time its validity moves, and last when it ends,
// so that a killed leader's term is known up to its last validity. The
// last line of a term counts.
type electionRecord struct {
	procs.Record
	Gen    int  `json:"gen"`
	Writes int  `json:"writes,omitempty"` // register writes so far, "ok" or "late"
	Late   int  `json:"late,omitempty"`   // of which late
	Stale  int  `json:"stale,omitempty"`  // register writes refused as stale
	Done   bool `json:"done,omitempty"`   // the term's last line
}

// RunElection runs an election among p.Workers worker processes for
// p.Duration. Each campaigns in [ElectionName] with p.TTL, leads for
// half a TTL to two TTLs while it writes the registers as
// [RunProcesses]'s workers do, resigns, and campaigns again. Meanwhile the nemesis kills the
// leader's process (a new worker takes its place) and, with
// p.PauseHolders, pauses the leader past its TTL. It also breaks
// p.Faults's nodes and runs p.Actions, as RunProcesses's does. The
// p.Leftovers, if set, counts what the backend holds at the end, as for
// RunProcesses. The history checker then requires at most one term at a time, tokens that
// increase from term to term (with p.Fenced), and no lost write.
//
// In a worker process, RunElection runs the worker and exits the process.
func RunElection(t *testing.T, p Processes) ElectionReport {
	p = p.withDefaults()
	if w, ok, err := procs.WorkerFromEnv(); ok {
		if err != nil {
			t.Fatal(err)
		}
		runElectionWorker(t, p, w)
		os.Exit(0)
	}
	dir := t.TempDir()
	start := time.Now()
	deadline := start.Add(p.Duration)
	gens := make([]int, p.Workers)
	spawn := func(i int) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.timeout="+(p.Duration+2*time.Minute).String())
		// A replacement works until the run's deadline, not a whole run.
		w := procs.Worker{Keys: 1, Duration: p.Duration, TTL: p.TTL}
		if gens[i] > 0 {
			w.Duration = time.Until(deadline)
		}
		cmd.Env = append(os.Environ(), envGeneration+"="+strconv.Itoa(gens[i]), envWorkerName+"="+sharedName, EnvWorkerOf+"=1")
		cmd.Env = append(cmd.Env, procs.WorkerEnv(i, dir, w)...)
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d-%d.out", i, gens[i])))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting worker %d: %v", i, err)
		}
		return cmd
	}
	workers := make([]*exec.Cmd, p.Workers)
	for i := range workers {
		workers[i] = spawn(i)
	}
	defer func() { // should the test stop early
		for _, w := range workers {
			w.Process.Signal(syscall.SIGCONT)
			w.Process.Kill()
		}
	}()
	var kills []time.Time
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	p.Actions = withElectionAction(p.Actions, "kill-leader", func(t *testing.T) {
		w := procs.Holder(dir, workers, rng, time.Now().Add(p.TTL))
		i := slices.Index(workers, w)
		w.Process.Kill()
		kills = append(kills, time.Now())
		w.Wait()
		os.Remove(procs.HoldingFile(dir, i))
		gens[i]++
		workers[i] = spawn(i)
	})
	losses := p.losses()
	faults := procs.Nemesis(context.Background(), procs.NemesisPlan{
		Dir: dir, Workers: workers, TTL: p.TTL, PauseHolders: p.PauseHolders, Actions: p.nemesisActions(t, losses),
		Stop: start.Add(p.Duration - p.TTL),
	})
	var rep ElectionReport
	for i, w := range workers {
		if err := w.Wait(); err != nil {
			out, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("worker-%d-%d.out", i, gens[i])))
			rep.WorkerErrors = append(rep.WorkerErrors, fmt.Sprintf("worker %d: %v\n%s", i, err, procs.TailOf(out, 2000)))
		}
	}
	rep.Took = time.Since(start)
	rep.Faults = faults
	froms := checkElection(p, dir, &rep, losses)
	for _, k := range kills {
		at := procs.Mono(k)
		if j, _ := slices.BinarySearch(froms, at); j < len(froms) {
			rep.Failovers = append(rep.Failovers, time.Duration(froms[j]-at))
		}
	}
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

// withElectionAction returns m with name added as f, in a new map.
func withElectionAction(m map[string]func(*testing.T), name string, f func(*testing.T)) map[string]func(*testing.T) {
	out := map[string]func(*testing.T){name: f}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// runElectionWorker is a worker process's life in RunElection. It
// campaigns and leads until the deadline, recording every term.
func runElectionWorker(t *testing.T, p Processes, pw procs.Worker) {
	i, dir := pw.Index, pw.Dir
	gen, _ := strconv.Atoi(os.Getenv(envGeneration))
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%d-%d.jsonl", i, gen)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	put := func(r electionRecord) {
		enc.Encode(r)
		w.Flush()
	}
	c := p.Open(t)
	defer c.Close()
	e, err := c.Election(ElectionName, lock.WithTTL(p.TTL), lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
	deadline := time.Now().Add(p.Duration)
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(p.TTL))
	defer cancel()
	marker := procs.HoldingFile(dir, i)
	for time.Now().Before(deadline) {
		cctx, ccancel := context.WithDeadline(ctx, deadline)
		term, err := e.Campaign(cctx, fmt.Sprintf("w%d.%d", i, gen))
		ccancel()
		if err != nil {
			if time.Now().Before(deadline) {
				put(electionRecord{Record: procs.Record{Worker: i, Err: err.Error(), At: procs.Mono(time.Now())}, Gen: gen})
			}
			continue
		}
		from := time.Now()
		l := term.Lock()
		tok, fenced := term.Token()
		rec := electionRecord{Record: procs.Record{Worker: i, Key: ElectionName, From: procs.Mono(from), Token: uint64(tok), Fenced: fenced, Expired: !from.Before(l.ValidUntil())}, Gen: gen}
		until := l.ValidUntil()
		rec.To = procs.Mono(until)
		put(rec)
		os.WriteFile(marker, nil, 0o644) // for the nemesis, which kills and pauses leaders
		end := from.Add(p.TTL/2 + time.Duration(rng.Int64N(int64(3*p.TTL/2))))
		for time.Now().Before(end) && term.Err() == nil {
			if wr := procs.WriteRegister(dir, ElectionName, l, p.TTL/10, time.Duration(rng.IntN(1000))*time.Microsecond); wr != "" {
				switch wr {
				case "ok":
					rec.Writes++
				case "late":
					rec.Writes++
					rec.Late++
				case "stale":
					rec.Stale++
				}
			}
			select {
			case <-term.Done():
			case <-time.After(p.TTL / 20):
			}
			if vu := l.ValidUntil(); !vu.Equal(until) {
				until = vu
				rec.To = procs.Mono(until)
				put(rec)
			}
		}
		to := time.Now()
		if vu := l.ValidUntil(); vu.Before(to) {
			to = vu
		}
		os.Remove(marker)
		term.Resign(ctx)
		rec.To = procs.Mono(to)
		rec.Done = true
		put(rec)
	}
}

// checkElection reads the workers' records and the register into rep,
// counting a token regression across one of losses (if not nil) apart
// (see Processes.KillsLoseCounters). It returns the instants the terms
// began, sorted.
func checkElection(p Processes, dir string, rep *ElectionReport, losses *procs.Losses) []int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "worker-*.jsonl"))
	type life struct{ worker, gen int }
	terms := make(map[[3]int64]electionRecord) // by worker, generation and start
	leaders := make(map[life]bool)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r electionRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				continue // a line cut short
			}
			if r.Err != "" {
				rep.Failed++
				if len(rep.FailedErrors) < 4 {
					rep.FailedErrors = append(rep.FailedErrors, fmt.Sprintf("worker %d.%d: %s", r.Worker, r.Gen, r.Err))
				}
				continue
			}
			terms[[3]int64{int64(r.Worker), int64(r.Gen), r.From}] = r
			leaders[life{r.Worker, r.Gen}] = true
		}
		f.Close()
	}
	var h History
	var froms []int64
	late := 0
	for _, r := range terms {
		rep.Acquired++
		if r.Expired {
			rep.ExpiredAtReturn++
		}
		froms = append(froms, r.From)
		rep.Writes += r.Writes
		late += r.Late
		rep.StaleRefused += r.Stale
		if r.To > r.From {
			h.Add(Hold{Key: r.Key, From: time.Unix(0, r.From), To: time.Unix(0, r.To), Token: fencing.Token(r.Token), Fenced: r.Fenced})
		}
	}
	rep.Leaders = len(leaders)
	rep.Overlaps, rep.Regressions, rep.RegressionsAcrossLoss, rep.Report, _ = procs.ViolationsLosing(h.engineHolds(), p.Fenced, losses)
	st := procs.ReadRegister(dir, ElectionName)
	// A write of a term killed after it wrote but before its record was
	// written again is not counted: more register writes than counted ones
	// are not a loss. Fewer are.
	if lost := rep.Writes - st.Count - late; lost > 0 {
		rep.LostWrites = lost
	}
	slices.Sort(froms)
	for i := 1; i < len(froms); i++ {
		rep.LongestUnavailable = max(rep.LongestUnavailable, time.Duration(froms[i]-froms[i-1]))
	}
	if rep.Took > 0 {
		rep.AcquiredPerSecond = float64(rep.Acquired) / rep.Took.Seconds()
	}
	return froms
}

// String is the report in a paragraph.
func (r ElectionReport) String() string {
	return fmt.Sprintf("%d leaders in %d terms; failovers after a kill: %v; %s", r.Leaders, r.Acquired, r.Failovers, r.ProcessReport.String())
}
