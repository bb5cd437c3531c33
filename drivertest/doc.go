// Package drivertest is the kit a lock driver's tests are built from: what
// every driver's tests would otherwise copy. Package conformance holds the
// suite itself; this package holds the scaffolding around it.
//
//   - Servers: [Lookup] and [List] find a test server through its
//     environment variable, and skip the test without it (or fail it, when
//     CI is set). [Main] holds the server's lock while a package's tests
//     run, and checks for leaked goroutines.
//   - Clients: [Open], [OpenPinged], [Connect], [Context], [WithParams]
//     and [RandomHex], the small helpers of every driver test.
//   - Examples: [ExampleServer] and [TokensGrow], the runnable example of a
//     driver on the test servers.
//   - Contention: [Contention] and [Acquisitions], the long run of many
//     clients on a few keys, checked with conformance.History.
//   - Processes: [ProcessRuns], the cross-process run with its nemesis and
//     the check that its count of leftovers can fail.
//   - Clusters: [Members], the members of a test cluster as processes to
//     kill, hang and restart (a conformance.Faults), and [HungBackend] and
//     [SilentServerIsUnavailable], the checks that a broken backend keeps
//     callers' deadlines.
//   - Wake-ups: [ReleaseWakes], the check that a release wakes a waiter.
//   - Scratch namespaces: [ListScratch], the check of a driver's
//     driver.ScratchLister on its backend.
//   - Benchmarks: [BenchAcquireRelease], [BenchParallelPaired],
//     [BenchAlternating] and [BenchHandoff], the driver beside a baseline
//     written by hand, in the same run.
//
// The package is in the core module and imports no backend's client, so
// that a driver's module that uses it pulls in no other backend. Its
// helpers that talk to a backend take functions that do. The steps of
// adding a driver are in drivers/WRITING.md.
package drivertest
