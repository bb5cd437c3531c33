package main

import (
	"regexp"
	"strings"
)

// The namespaces bench adds to a DSN that does not set its own: a table, a
// database and collection, a prefix or a chroot of bench's, so that its
// keys never mix with the user's locks. The MongoDB collection is the
// run's own, and dropped when it ends (see benchMongoGrants).
const (
	benchTableParam    = "distlock_table=distlock_bench_leases" // postgres and mysql
	benchMongoDatabase = "distlock_bench"
	benchMongoParams   = "distlock_database=" + benchMongoDatabase + "&distlock_collection=grants_RUN"
	benchEtcdParams    = "prefix=distlock-bench/"
	benchZKRoot        = "/distlock-bench"
)

// benchNamespaced returns driver d's DSN with bench's namespace added,
// unless the DSN sets one already, and the run's own MongoDB collection
// when it added one. The run is named run. Drivers without a namespace of
// bench's (Redis, NATS) keep their DSN: bench's keys have a prefix of
// their own, and expire.
func benchNamespaced(d, dsn, run string) (string, *benchMongoGrants) {
	switch d {
	case "postgres", "mysql":
		keywords := d == "postgres" && !strings.Contains(dsn, "://") // host=h dbname=db
		if !benchHasParam(dsn, "distlock_table", keywords) {
			return benchWithParams(dsn, benchTableParam, keywords), nil
		}
	case "mongodb":
		if !benchHasParam(dsn, "distlock_database", false) && !benchHasParam(dsn, "distlock_collection", false) {
			g := &benchMongoGrants{uri: benchWithoutOwnParams(dsn), coll: "grants_" + run}
			return benchWithParams(dsn, strings.Replace(benchMongoParams, "RUN", run, 1), false), g
		}
	case "etcd":
		if !benchHasParam(dsn, "prefix", false) {
			return benchWithParams(dsn, benchEtcdParams, false), nil
		}
	case "zookeeper":
		return benchWithChroot(dsn, benchZKRoot), nil
	}
	return dsn, nil
}

// benchHasParam reports whether dsn sets the parameter name: in its query,
// or as a keyword if keywords says dsn is in keyword/value form.
func benchHasParam(dsn, name string, keywords bool) bool {
	if keywords {
		return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(name) + `\s*=`).MatchString(dsn)
	}
	_, query, _ := strings.Cut(dsn, "?")
	for kv := range strings.SplitSeq(query, "&") {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			return true
		}
	}
	return false
}

// benchWithParams adds params (k=v&k=v) to a DSN's query (a URL's or a
// MySQL DSN's), or as keywords (k=v k=v) if keywords says dsn is in
// keyword/value form.
func benchWithParams(dsn, params string, keywords bool) string {
	scheme, rest, isURL := strings.Cut(dsn, "://")
	switch {
	case keywords:
		return dsn + " " + strings.ReplaceAll(params, "&", " ")
	case strings.Contains(dsn, "?"):
		return dsn + "&" + params
	case isURL && !strings.Contains(rest, "/"):
		return scheme + "://" + rest + "/?" + params // MongoDB wants the path's slash
	}
	return dsn + "?" + params
}

// benchWithoutOwnParams returns a URL without the parameters the lock
// drivers read (distlock_...), for a client of the server's own.
func benchWithoutOwnParams(uri string) string {
	base, query, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	var keep []string
	for kv := range strings.SplitSeq(query, "&") {
		if kv != "" && !strings.HasPrefix(kv, "distlock_") {
			keep = append(keep, kv)
		}
	}
	if len(keep) == 0 {
		return base
	}
	return base + "?" + strings.Join(keep, "&")
}

// benchWithChroot returns a ZooKeeper DSN
// (zk://[user[:password]@]hosts[/chroot][?params]) with the chroot root,
// unless it names one.
func benchWithChroot(dsn, root string) string {
	rest, query, hasQuery := strings.Cut(dsn, "?")
	scheme, hosts, isURL := strings.Cut(rest, "://")
	if !isURL {
		return dsn // the driver says what is wrong with it
	}
	if _, path, _ := strings.Cut(hosts, "/"); strings.Trim(path, "/") != "" {
		return dsn
	}
	out := scheme + "://" + strings.TrimRight(hosts, "/") + root
	if hasQuery {
		out += "?" + query
	}
	return out
}
