// Package locktest is a lock backend for your own tests, whose faults the
// test turns on: a lock lost now, extensions that fail or hang, an
// outage, a slow release, a stale fencing token. It wraps any driver's
// connector, the memory driver's included, so the code under test runs
// on the real package lock, with its real Done, Err, KeepAlive and Do.
//
//	b := locktest.New() // over a memory store of its own
//	c := lock.OpenConnector(b)
//	defer c.Close()
//	...
//	b.Lose("invoice:42") // the holder's Done closes; Do's function is cancelled
//
// The faults:
//
//   - [Backend.Lose] loses the lock held on a key now, through the
//     driver's loss signal (driver.Lease.Lost): Done closes, Err and Do's
//     cause match lock.ErrLost.
//   - [Backend.FailExtensions], [Backend.RefuseExtensions] and
//     [Backend.HangExtensions] (with [Backend.Resume]) break the next
//     extensions.
//   - [Backend.Unavailable] makes every call fail, with lock.ErrUnavailable,
//     for a while.
//   - [Backend.DelayReleases] slows the next releases.
//   - [Backend.Supersede] admits a newer token at your fencing guard, so
//     that the lock held now, and the next one, write with stale tokens.
//
// [Backend.Holds] tells whether a lock is held by the backend's account,
// for a fake resource to catch a write made after the lock ended.
//
// # Testing a worker
//
// A worker whose write must stop the moment its lock is lost, and its
// test, under testing/synctest. Make the Backend inside the bubble, so
// that its store runs on the bubble's clock:
//
//	func worker(ctx context.Context, c *lock.Client, write func(context.Context) error) error {
//		return c.Do(ctx, "report", func(ctx context.Context) error {
//			for ctx.Err() == nil {
//				if err := write(ctx); err != nil {
//					return err
//				}
//				time.Sleep(100 * time.Millisecond)
//			}
//			return context.Cause(ctx)
//		})
//	}
//
//	func TestWorker_stopsWhenLost(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			b := locktest.New()
//			c := lock.OpenConnector(b)
//			defer c.Close()
//			write := func(ctx context.Context) error { // a fake of the resource
//				tok, _ := lock.FromContext(ctx).Token()
//				if !b.Holds("report", tok) {
//					t.Error("wrote after the lock was lost")
//				}
//				return nil
//			}
//			done := make(chan error)
//			go func() { done <- worker(t.Context(), c, write) }()
//			time.Sleep(1050 * time.Millisecond) // eleven writes
//			b.Lose("report")
//			if err := <-done; !errors.Is(err, lock.ErrLost) {
//				t.Errorf("worker = %v, want lock.ErrLost", err)
//			}
//		})
//	}
//
// The loss falls between two writes. A client learns of a loss a moment
// after its backend, and no worker can help a write in that moment.
// A worker that ignores its context and writes on fails the test.
//
// Faults act on every client opened on the Backend, from the moment the
// method returns. Everything the Backend waits on (a hang, a delay, an
// outage's end) is a channel, a timer or a reading of time.Now, so that
// under testing/synctest time moves only when every goroutine waits, and
// each run is the same.
package locktest
