// Package dsn is the grammar of the drivers' DSNs, for driver authors.
// Users of locks want package [github.com/distlock/lock] and a driver's
// documentation instead.
//
// A DSN of this grammar reads
//
//	scheme://[user[:password]@]host[:port][,host[:port]...][/path][?name=value&...]
//
// A [Grammar] names the scheme, the default port, whether a path may
// follow the hosts, and the driver's [Params]: a table of names, kinds,
// defaults and documentation that [Grammar.Parse] applies. A driver whose
// client library parses its own URLs takes only its parameters out of them,
// with [Params.Take], and lets the library parse the rest. A DSN that is a
// list of such URLs, one per server, is split by [SplitURLs].
//
// No error of this package quotes a password. [DSN.String] shows the
// password as xxxxx, and [Redact] takes a DSN's passwords out of the
// messages of client libraries that quote them.
package dsn
