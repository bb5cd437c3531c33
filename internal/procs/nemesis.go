package procs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// NemesisPlan is what [Nemesis] may do, and until when.
type NemesisPlan struct {
	Dir          string      // the run's, where holders leave their markers
	Workers      []*exec.Cmd // the run's workers; the nemesis reads the slice each time, so a caller may replace one
	TTL          time.Duration
	PauseHolders bool     // pause a holder (SIGSTOP) for 1.5 TTLs
	NetFaults    bool     // reset or slow a worker's connections (see Worker.ServeNetFaults)
	Actions      []Action // more faults, by name
	Stop         time.Time
}

// The nemesis's own actions, by name.
const (
	PauseHolder      = "pause-holder"      // SIGSTOP of a holder for 1.5 TTLs
	ResetConnections = "reset-connections" // a worker's connections, all closed at once
	SlowConnections  = "slow-connections"  // a worker's reads and writes delayed for 1.5 TTLs
)

// Nemesis breaks and mends on a random schedule until p.Stop or ctx's end,
// on the caller's goroutine, and returns its actions by kind. It deals the
// kinds like cards, every kind once before any twice, so that a short run
// sees each. It mends everything it broke before it returns. It signals
// only p.Workers.
func Nemesis(ctx context.Context, p NemesisPlan) map[string]int {
	done := make(map[string]int)
	actions := slices.Clone(p.Actions)
	slices.SortFunc(actions, func(a, b Action) int { return strings.Compare(a.Name, b.Name) })
	var kinds []string
	for _, a := range actions {
		kinds = append(kinds, a.Name)
	}
	if p.PauseHolders {
		kinds = append(kinds, PauseHolder)
	}
	if p.NetFaults {
		kinds = append(kinds, ResetConnections, SlowConnections)
	}
	if len(kinds) == 0 {
		sleep(ctx, time.Until(p.Stop))
		return done
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var deck []string
	first, firstDeck := true, true
	for {
		// The first deck's turns come sooner (100-300ms, where later ones
		// come every 200-800ms), so that a short run sees every kind even
		// where its workers were slow to start: a 4s run of verify on a
		// loaded machine dealt both connection faults and no pause.
		gap := 200 + rng.IntN(600)
		if first || len(deck) > 0 && firstDeck {
			gap = 100 + rng.IntN(200)
		}
		if !sleep(ctx, time.Duration(gap)*time.Millisecond) || time.Now().After(p.Stop) {
			return done
		}
		if len(deck) == 0 { // every kind once, in a random order, before any twice
			firstDeck = first
			deck = slices.Clone(kinds)
			rng.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
			if first {
				// The first deck deals the pause last: it lasts 1.5 TTLs,
				// and the others are over at once, so a short run sees
				// every kind.
				if i := slices.Index(deck, PauseHolder); i > 0 {
					deck[0], deck[i] = deck[i], deck[0]
				}
				first = false
			}
		}
		kind := deck[len(deck)-1]
		deck = deck[:len(deck)-1]
		switch kind {
		case PauseHolder:
			done[kind]++
			w := stopHolder(p.Dir, p.Workers, rng, time.Now().Add(time.Second))
			sleep(ctx, p.TTL*3/2)
			w.Process.Signal(syscall.SIGCONT)
			continue
		case ResetConnections, SlowConnections:
			sig := syscall.SIGUSR1
			if kind == SlowConnections {
				sig = syscall.SIGUSR2
			}
			if netFault(p.Dir, p.Workers, rng, sig) {
				done[kind]++
			} else {
				// No worker takes the signals yet (workers still
				// starting, on a loaded machine): the card goes back on
				// top, to be dealt at the next turn.
				deck = append(deck, kind)
			}
			continue
		}
		done[kind]++
		for _, a := range actions {
			if a.Name == kind {
				a.Do()
			}
		}
	}
}

// sleep sleeps for d, or until ctx ends, and reports whether ctx is still
// alive.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// stopHolder stops (SIGSTOP) a worker that holds a lock, and returns it.
// A worker holds for a moment at a time: it may have let go between the
// look and the signal. So once the worker has stopped, its marker must
// still be there; if not, it is resumed and another look is made, until
// deadline, after which the last one stopped stays so. (On a loaded
// machine both pauses of a 4s run of verify once missed every holding,
// and the unsafe variant went uncaught.)
func stopHolder(dir string, workers []*exec.Cmd, rng *rand.Rand, deadline time.Time) *exec.Cmd {
	for {
		w := Holder(dir, workers, rng, deadline)
		w.Process.Signal(syscall.SIGSTOP)
		waitStopped(w.Process.Pid)
		i := slices.Index(workers, w)
		if _, err := os.Stat(HoldingFile(dir, i)); err == nil || time.Now().After(deadline) {
			return w
		}
		w.Process.Signal(syscall.SIGCONT)
	}
}

// waitStopped waits, up to 100ms, until the process pid is stopped, as
// /proc tells; where /proc cannot tell, 5ms.
func waitStopped(pid int) {
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			time.Sleep(5 * time.Millisecond)
			return
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return
		}
	}
}

// Holder returns a worker that holds a lock, looking until deadline, and
// a random worker if none did. A worker holds for a moment at a time, and
// on a busy machine the look may come between two holds. A pause of a
// worker that holds nothing tests nothing, and an unsafe variant's check
// could miss its violations.
func Holder(dir string, workers []*exec.Cmd, rng *rand.Rand, deadline time.Time) *exec.Cmd {
	for {
		for _, j := range rng.Perm(len(workers)) {
			if _, err := os.Stat(HoldingFile(dir, j)); err == nil {
				return workers[j]
			}
		}
		if time.Now().After(deadline) {
			return workers[rng.IntN(len(workers))]
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// netFault sends sig to a worker that takes connection faults (it left
// its marker: see Worker.ServeNetFaults), preferring one that holds a
// lock, and reports whether one took it. A worker without the marker
// would die of the signal, so none is sent to it.
func netFault(dir string, workers []*exec.Cmd, rng *rand.Rand, sig syscall.Signal) bool {
	var serving []int
	for i := range workers {
		if _, err := os.Stat(netFaultsFile(dir, i)); err == nil {
			serving = append(serving, i)
		}
	}
	if len(serving) == 0 {
		return false
	}
	i := serving[rng.IntN(len(serving))]
	for _, j := range serving {
		if _, err := os.Stat(HoldingFile(dir, j)); err == nil {
			i = j
			break
		}
	}
	return workers[i].Process.Signal(sig) == nil
}
