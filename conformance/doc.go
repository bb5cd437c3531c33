// Package conformance is the test suite every lock driver passes. It
// checks the promises of package lock through the portable API against a
// real backend.
//
// A driver's test hands [Run] a [Harness], and the suite runs as subtests.
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Harness{
//			NewClient: func(t *testing.T) *lock.Client {
//				c, err := lock.Open("mydriver", dsn)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return c
//			},
//			Fencing: true,
//			Extend:  true,
//			Wakeups: true,
//		})
//	}
//
// The harness asks for a factory of clients that all share one backend,
// and the driver's answers about its optional capabilities. If it also
// gives [Harness.NewConn], a raw driver connection, the suite checks the
// promises the core's own checks hide. If it gives [Harness.NewScratchConn],
// connections on scratch namespaces of the suite's naming, the suite
// checks driver.Dropper: a Drop takes every key with it, held ones
// included. If it gives [Harness.Faults], the
// suite adds the fault cases of a quorum backend. If it gives
// [Harness.NewDialerClient], clients whose connections a dial of the
// suite's makes, the suite checks driver.DialerDriver: every connection
// goes through that dial, a client comes back after its connections are
// cut, and a dial that always fails fails an acquisition in time, holding
// nothing. Every case works on keys
// of its own, so a backend can be shared with other tests. Cases run in
// parallel. The suite checks lock.Election too, on the same harness: one
// leader at a time, tokens increasing from term to term, a lost term's end
// by its validity, a resignation's wake-up, and Observe.
//
// [History], the checker of mutual exclusion and fencing that the
// contention cases use, serves a driver's own stress tests too, and
// checks elections' terms as holdings of the election's key.
// [RunElection] holds an election among worker processes to it, while the
// leader is killed and paused. The suite
// is itself tested against deliberately broken drivers, to show that each
// of its checks can fail. The scaffolding around the suite that every
// driver's tests share (servers, examples, contention and process runs,
// cluster faults, benchmarks) is in package drivertest.
package conformance
