package procs

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/distlock/lock"
)

// Worker is what a worker process is told of its run.
type Worker struct {
	Index    int    `json:"-"`
	Dir      string `json:"-"`
	Keys     int
	Duration time.Duration
	TTL      time.Duration
	Permits  int
}

// WorkerFromEnv returns the worker that [Run] started this process as,
// and false if Run did not start it.
func WorkerFromEnv() (Worker, bool, error) {
	idx := os.Getenv(EnvWorker)
	if idx == "" {
		return Worker{}, false, nil
	}
	var w Worker
	if err := json.Unmarshal([]byte(os.Getenv(envWorkerConfig)), &w); err != nil {
		return Worker{}, true, fmt.Errorf("procs: worker settings: %w", err)
	}
	i, err := strconv.Atoi(idx)
	if err != nil {
		return Worker{}, true, fmt.Errorf("procs: worker index %q: %w", idx, err)
	}
	w.Index, w.Dir = i, os.Getenv(envWorkerDir)
	return w, true, nil
}

// KeyName is the name of the run's key i.
func KeyName(i int) string { return "procs/" + strconv.Itoa(i) }

// Record is one worker's line for one holding, or a failed attempt. Times
// are CLOCK_MONOTONIC nanoseconds, which every process of the machine
// shares.
type Record struct {
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

// Work is a worker process's life. It contends with c until the
// deadline, recording every holding and failure in w.Dir. Every holding
// reads a register (a file per key) and pauses up to a millisecond. If
// its validity has more than a tenth of the TTL left, it then writes the
// register back incremented, with its token (see [WriteRegister]). Its
// error is for records it could not write.
func Work(c *lock.Client, w Worker) error {
	f, err := os.Create(recordFile(w.Dir, w.Index))
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	defer bw.Flush()
	enc := json.NewEncoder(bw)
	rng := rand.New(rand.NewPCG(uint64(w.Index), uint64(time.Now().UnixNano())))
	deadline := time.Now().Add(w.Duration)
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(w.TTL))
	defer cancel()
	for time.Now().Before(deadline) {
		key := KeyName(rng.IntN(w.Keys))
		actx, acancel := context.WithTimeout(ctx, 2*w.TTL)
		l, err := w.acquire(actx, c, key)
		acancel()
		if err != nil {
			enc.Encode(Record{Worker: w.Index, Err: err.Error(), At: Mono(time.Now())})
			bw.Flush()
			continue
		}
		from := time.Now()
		expired := !from.Before(l.ValidUntil()) // checked before the nemesis may pause the holder
		marker := HoldingFile(w.Dir, w.Index)
		os.WriteFile(marker, nil, 0o644) // for the nemesis, which pauses holders
		tok, fenced := l.Token()
		key = l.Key() // a permit's is its slot's
		rec := Record{Worker: w.Index, Key: key, From: Mono(from), Token: uint64(tok), Fenced: fenced, Expired: expired}
		rec.Write = WriteRegister(w.Dir, key, l, w.TTL/10, time.Duration(rng.IntN(1000))*time.Microsecond)
		to := time.Now()
		if vu := l.ValidUntil(); vu.Before(to) {
			to = vu
		}
		rec.To = Mono(to)
		os.Remove(marker)
		l.Release(ctx)
		if err := enc.Encode(rec); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// acquire acquires key for w: the lock, or a permit of the semaphore
// named key if w.Permits.
func (w Worker) acquire(ctx context.Context, c *lock.Client, key string) (*lock.Lock, error) {
	opts := []lock.Option{lock.WithTTL(w.TTL), lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond))}
	if w.Permits == 0 {
		return c.Acquire(ctx, key, opts...)
	}
	s, err := c.Semaphore(key, w.Permits, opts...)
	if err != nil {
		return nil, err
	}
	return s.Acquire(ctx)
}

// NetFaulter is what breaks a worker's connections: a dialer of the
// worker's, through which its client dials every connection.
type NetFaulter interface {
	Reset() int               // closes every connection at once
	Slow(delay time.Duration) // delays every read and write, until Slow(0)
}

// ServeNetFaults makes this worker take the nemesis's connection faults
// ([Config.NetFaults]) on f until stop is called: SIGUSR1 resets every
// connection, and SIGUSR2 delays every read and write by a fifth of the
// TTL for 1.5 TTLs. Requests and their replies come late: the client
// must judge a lock's validity from before it asked. It leaves a marker in w.Dir once the signals are taken, so
// that the nemesis sends none before.
func (w Worker) ServeNetFaults(f NetFaulter) (stop func(), err error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var mend *time.Timer
		defer func() {
			if mend != nil {
				mend.Stop()
			}
			f.Slow(0)
		}()
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				if s == syscall.SIGUSR1 {
					f.Reset()
					continue
				}
				f.Slow(w.TTL / 5)
				if mend != nil {
					mend.Stop()
				}
				mend = time.AfterFunc(w.TTL*3/2, func() { f.Slow(0) })
			}
		}
	}()
	stop = func() {
		// Ignored from now on, not reset to their default, which would
		// end the process: the nemesis may have looked at the marker
		// just before it went.
		signal.Ignore(syscall.SIGUSR1, syscall.SIGUSR2)
		close(done)
		wg.Wait()
		os.Remove(netFaultsFile(w.Dir, w.Index))
	}
	if err := os.WriteFile(netFaultsFile(w.Dir, w.Index), nil, 0o644); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// netFaultsFile is the marker worker i leaves in dir once it takes
// connection faults.
func netFaultsFile(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("netfaults-%d", i))
}

// HoldingFile is the marker worker i keeps in dir while it holds a lock.
// The nemesis looks for it to pause a holder.
func HoldingFile(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("holding-%d", i))
}

// RegisterState is a register's file. It holds the count of writes the
// register took and the newest token it saw.
type RegisterState struct {
	Count int    `json:"count"`
	Token uint64 `json:"token"`
}

// ReadRegister returns the state of key's register in dir.
func ReadRegister(dir, key string) RegisterState {
	var st RegisterState
	if b, err := os.ReadFile(filepath.Join(dir, registerFile(key))); err == nil {
		json.Unmarshal(b, &st)
	}
	return st
}

// registerFile names the file of key's register.
func registerFile(key string) string {
	return "register-" + strings.NewReplacer("/", "_", "\x1f", "_").Replace(key)
}

// WriteRegister reads key's register, pauses, and writes it back
// incremented under l's token if l's validity has more than margin left.
// It returns "ok" for such a write, and "late" for one that ended past the
// validity. It returns "stale" if the register has seen a newer token, and
// "" if it did not write.
func WriteRegister(dir, key string, l *lock.Lock, margin, pause time.Duration) string {
	path := filepath.Join(dir, registerFile(key))
	st := ReadRegister(dir, key)
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
	cur := ReadRegister(dir, key)
	if uint64(tok) < cur.Token {
		return "stale"
	}
	// Replaced whole (a rename), so that a read sees the old state or the
	// new, never a file cut short by a writer paused in the middle.
	b, _ := json.Marshal(RegisterState{Count: st.Count + 1, Token: uint64(tok)})
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
