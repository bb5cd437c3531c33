package main

import (
	"strings"
)

// verifyNamespace is the scratch namespace of one verify run in a user's
// backend: the DSN the run's workers use, and what it is, for the output.
type verifyNamespace struct {
	dsn  string // the user's DSN with the namespace added; never printed
	what string // "table distlock_verify_675382b1_1a2b3c4d", and so on
	run  string // the run's name (see randomRunName)
}

// verifyNamespaced adds a scratch namespace named after run to driver d's
// DSN, as benchNamespaced adds bench's: a table (postgres, mysql), a
// collection (mongodb), a key prefix (Redis drivers, etcd), a chroot
// (zookeeper) or a bucket (nats). A DSN that names a namespace of its own
// is refused: verify drops its namespace at the end, and must never drop
// the user's.
func verifyNamespaced(d, dsn, run string) (verifyNamespace, error) {
	name := "distlock_verify_" + run
	prefix := "distlock-verify/" + run + "/"
	refuse := func(param string) (verifyNamespace, error) {
		return verifyNamespace{}, failure(exitUsage, "the DSN sets %s: verify works in a scratch namespace of its own, which it drops at the end; take %s out of the DSN", param, param)
	}
	switch d {
	case "postgres", "mysql":
		keywords := d == "postgres" && !strings.Contains(dsn, "://") // host=h dbname=db
		if benchHasParam(dsn, "distlock_table", keywords) {
			return refuse("distlock_table")
		}
		return verifyNamespace{benchWithParams(dsn, "distlock_table="+name, keywords), "table " + name, run}, nil
	case "mongodb":
		if benchHasParam(dsn, "distlock_collection", false) {
			return refuse("distlock_collection")
		}
		return verifyNamespace{benchWithParams(dsn, "distlock_collection="+name, false), "collection " + name, run}, nil
	case "etcd":
		if benchHasParam(dsn, "prefix", false) {
			return refuse("prefix")
		}
		return verifyNamespace{withQueryParam(dsn, "prefix="+prefix), "key prefix " + prefix, run}, nil
	case "zookeeper":
		root := "/distlock-verify-" + run
		out := benchWithChroot(dsn, root)
		if out == dsn && strings.Contains(dsn, "://") {
			return refuse("a chroot")
		}
		return verifyNamespace{out, "chroot " + root, run}, nil
	case "nats":
		if benchHasParam(dsn, "bucket", false) {
			return refuse("bucket")
		}
		return verifyNamespace{withQueryParam(dsn, "bucket="+name), "bucket " + name, run}, nil
	case "goredis", "redigo", "rueidis", "valkey":
		urls := strings.Split(dsn, ",")
		for _, u := range urls {
			if benchHasParam(u, "key_prefix", false) {
				return refuse("key_prefix")
			}
		}
		// The Redlock drivers take their parameters on any of the URLs:
		// the last one gets it.
		last := &urls[len(urls)-1]
		*last = withQueryParam(*last, "key_prefix="+prefix)
		return verifyNamespace{strings.Join(urls, ","), "key prefix " + prefix, run}, nil
	}
	// Without a namespace, the run's keys could be the user's.
	return verifyNamespace{}, failure(exitUsage, "verify knows no scratch namespace for driver %s", d)
}

// withQueryParam adds k=v to a URL's query. Unlike benchWithParams, it
// adds no path: a Redis URL's path names a database.
func withQueryParam(u, kv string) string {
	if strings.Contains(u, "?") {
		return u + "&" + kv
	}
	return u + "?" + kv
}
