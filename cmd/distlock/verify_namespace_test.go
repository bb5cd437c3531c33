package main

import (
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// Each driver's DSN gets the run's scratch namespace, and a DSN that names
// a namespace of its own is refused: verify drops its namespace at the
// end, and must never drop the user's.
func TestVerifyNamespaced(t *testing.T) {
	cases := []struct {
		driver, dsn, want, what string
	}{
		{"postgres", "postgres://u:pw@db/app", "postgres://u:pw@db/app?distlock_table=distlock_verify_r1", "table distlock_verify_r1"},
		{"postgres", "host=db dbname=app", "host=db dbname=app distlock_table=distlock_verify_r1", "table distlock_verify_r1"},
		{"mysql", "u@tcp(db:3306)/app?timeout=1s", "u@tcp(db:3306)/app?timeout=1s&distlock_table=distlock_verify_r1", "table distlock_verify_r1"},
		{"mongodb", "mongodb://db:27017", "mongodb://db:27017/?distlock_collection=distlock_verify_r1", "collection distlock_verify_r1"},
		{"etcd", "etcd://e1:2379,e2:2379", "etcd://e1:2379,e2:2379?prefix=distlock-verify/r1/", "key prefix distlock-verify/r1/"},
		{"zookeeper", "zk://z1:2181,z2:2181?session_timeout=4s", "zk://z1:2181,z2:2181/distlock-verify-r1?session_timeout=4s", "chroot /distlock-verify-r1"},
		{"nats", "nats://n1:4222", "nats://n1:4222?bucket=distlock_verify_r1", "bucket distlock_verify_r1"},
		{"goredis", "redis://a?node_timeout=50ms,redis://b", "redis://a?node_timeout=50ms,redis://b?key_prefix=distlock-verify/r1/", "key prefix distlock-verify/r1/"},
		{"valkey", "redis://a,redis://b?fencing=true", "redis://a,redis://b?fencing=true&key_prefix=distlock-verify/r1/", "key prefix distlock-verify/r1/"},
	}
	for _, c := range cases {
		ns, err := verifyNamespaced(c.driver, c.dsn, "r1")
		if err != nil || ns.dsn != c.want || ns.what != c.what {
			t.Errorf("%s %q: got %q (%q), %v; want %q (%q)", c.driver, c.dsn, ns.dsn, ns.what, err, c.want, c.what)
		}
		if _, err := lock.NewConnector(c.driver, c.want); err != nil { // the driver reads it
			t.Errorf("%s %q: %v", c.driver, c.want, err)
		}
	}
	refused := []struct{ driver, dsn, param string }{
		{"postgres", "postgres://db/app?distlock_table=locks", "distlock_table"},
		{"postgres", "host=db distlock_table=locks", "distlock_table"},
		{"mongodb", "mongodb://db/?distlock_collection=grants", "distlock_collection"},
		{"etcd", "etcd://e1:2379?prefix=app/", "prefix"},
		{"zookeeper", "zk://z1:2181/app", "chroot"},
		{"nats", "nats://n1:4222?bucket=locks", "bucket"},
		{"goredis", "redis://a,redis://b?key_prefix=app:", "key_prefix"},
		{"cmd-distlock-test-unknown", "x", "no scratch namespace"},
	}
	for _, c := range refused {
		_, err := verifyNamespaced(c.driver, c.dsn, "r1")
		if err == nil || !strings.Contains(err.Error(), c.param) {
			t.Errorf("%s %q: %v, want a refusal naming %s", c.driver, c.dsn, err, c.param)
		}
	}
}

// A scratch namespace's name, as its driver lists it, gives back its run
// and when the run began; names that no run of verify gives are not
// taken for one (the sweep must never drop a user's namespace).
func TestScratchRun(t *testing.T) {
	began := time.Unix(0x675382b1, 0)
	run, err := randomRunName(began)
	if err != nil {
		t.Fatal(err)
	}
	dsns := map[string]string{
		"postgres": "postgres://db/app", "mysql": "u@tcp(db:3306)/app", "mongodb": "mongodb://db:27017",
		"etcd": "etcd://e1:2379", "zookeeper": "zk://z1:2181", "nats": "nats://n1:4222",
		"goredis": "redis://a", "redigo": "redis://a", "rueidis": "redis://a", "valkey": "redis://a",
	}
	for d, dsn := range dsns {
		ns, err := verifyNamespaced(d, dsn, run)
		if err != nil {
			t.Fatal(err)
		}
		name := ns.what[strings.LastIndexByte(ns.what, ' ')+1:] // "table X", "key prefix X"
		got, at, ok := scratchRun(d, name)
		if !ok || got != run || !at.Equal(began) {
			t.Errorf("%s: scratchRun(%q) = %q, %v, %v; want %q, %v", d, name, got, at, ok, run, began)
		}
	}
	for _, name := range []string{"distlock_verify_1a2b3c4d", "distlock_verify_x_1a2b3c4d", "distlock_verify_675382b1_1a2b3c4d_more",
		"distlock_verifyx", "app_locks", "distlock-verify/675382b1_1a2b3c4d/"} {
		if run, _, ok := scratchRun("postgres", name); ok {
			t.Errorf("postgres: %q taken for the namespace of run %q", name, run)
		}
	}
	if _, _, ok := scratchRun("goredis", "distlock-verify/675382b1_1a2b3c4d/"); !ok {
		t.Error("goredis: a key prefix of a run not taken for one")
	}
}
