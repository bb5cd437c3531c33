package testenv

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// Servers is a lock on shared test servers, which keeps a package's tests
// from running while another package's tests break those servers (go test
// runs packages at once). The locks are files in DISTLOCK_SERVICES_DIR;
// without it (no servers), they are not taken.
type Servers struct {
	name      string
	exclusive bool
}

var (
	// Redis holds the Redis servers alone: the Redis drivers' fault tests
	// kill and hang them, so every package that uses them takes this lock.
	Redis = Servers{"redis", true}

	// Valkey holds the Valkey servers alone: the rueidis and valkey
	// drivers' fault tests kill and hang them. It is apart from Redis, so
	// that those drivers' tests run beside the other Redis packages'.
	Valkey = Servers{"valkey", true}

	// Postgres shares the PostgreSQL server with other packages' tests,
	// but not with one that holds PostgresAlone.
	Postgres = Servers{"postgres", false}

	// PostgresAlone holds the PostgreSQL server alone, for tests that
	// restart it.
	PostgresAlone = Servers{"postgres", true}

	// MongoDB shares the MongoDB server (FerretDB) with other packages'
	// tests, but not with one that holds MongoDBAlone.
	MongoDB = Servers{"mongodb", false}

	// MongoDBAlone holds the MongoDB server alone, for tests that kill and
	// restart it.
	MongoDBAlone = Servers{"mongodb", true}

	// Etcd and ZooKeeper hold their three-member clusters alone: their
	// drivers' fault tests kill and hang members.
	Etcd      = Servers{"etcd", true}
	ZooKeeper = Servers{"zookeeper", true}
)

// Main runs m's tests holding locks, then checks with goleak that no
// goroutine outlived them, and exits. Use it as TestMain.
//
// In a worker process of conformance.RunProcesses (DISTLOCK_WORKER_OF is
// set), it takes no lock: the parent test holds them.
func Main(m *testing.M, locks ...Servers) { MainIgnoring(m, nil, locks...) }

// MainIgnoring is Main, with goleak told to ignore what ignore names: for
// a test dependency's known leaks, which are not ours to fix.
func MainIgnoring(m *testing.M, ignore []goleak.Option, locks ...Servers) {
	os.Exit(run(m, ignore, locks))
}

// MainBuilding is Main for the tests of a command that run it as a
// subprocess, as users do. It first builds the Go package pkg (as go build
// names it, from the test's folder) with buildFlags into a folder of its
// own, and sets *binary to the program's path; it removes the folder
// before it exits.
func MainBuilding(m *testing.M, binary *string, pkg string, buildFlags []string, locks ...Servers) {
	dir, err := os.MkdirTemp("", "distlock-command-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(1)
	}
	*binary = filepath.Join(dir, "distlock")
	args := append(append([]string{"build", "-o", *binary}, buildFlags...), pkg)
	code := 1
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
	} else {
		code = run(m, nil, locks)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs m's tests holding locks (none in a worker process), then
// checks with goleak, and returns the exit code.
func run(m *testing.M, ignore []goleak.Option, locks []Servers) int {
	if os.Getenv("DISTLOCK_WORKER_OF") != "" || fuzzWorker() {
		locks = nil
	}
	release, err := Hold(locks...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	code := m.Run()
	release()
	if code == 0 {
		if err := goleak.Find(ignore...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	return code
}

// fuzzWorker reports whether this process is a worker that go test -fuzz
// started. Its parent holds the locks already, and a worker that waited
// for them would wait for ever.
func fuzzWorker() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// Hold takes locks in one order whatever the order given (by name,
// backwards: Redis's before PostgreSQL's), so that no two packages wait for
// each other, and returns the function that releases them.
func Hold(locks ...Servers) (release func(), err error) {
	dir := os.Getenv("DISTLOCK_SERVICES_DIR")
	if dir == "" {
		return func() {}, nil
	}
	locks = slices.Clone(locks)
	slices.SortFunc(locks, func(a, b Servers) int { return -compareNames(a.name, b.name) }) // "redis" first
	var files []*os.File
	release = func() {
		for _, f := range slices.Backward(files) {
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
	}
	for _, l := range locks {
		f, err := os.OpenFile(filepath.Join(dir, l.name+"-tests.lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			release()
			return nil, err
		}
		how := syscall.LOCK_SH
		if l.exclusive {
			how = syscall.LOCK_EX
		}
		if err := syscall.Flock(int(f.Fd()), how); err != nil {
			f.Close()
			release()
			return nil, fmt.Errorf("flock %s: %w", f.Name(), err)
		}
		files = append(files, f)
	}
	return release, nil
}

func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Lock returns the lock on the test server name (the name of its file in
// scripts/services.d), held alone if alone is set: for a server that a
// driver's tests kill, hang or restart. Redis, Postgres and the others
// above are such locks.
func Lock(name string, alone bool) Servers { return Servers{name, alone} }
