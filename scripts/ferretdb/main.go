// Command ferretdb runs FerretDB (a MongoDB wire-protocol server) for
// distlock's tests, on its SQLite backend or on PostgreSQL.
// scripts/services.sh builds and starts it; it is not part of the library.
//
// It lives in a module of its own so that FerretDB's dependencies stay out of
// the library's go.mod. Where FerretDB and cmd/distlock share a module (gRPC,
// protobuf, pgx, OpenTelemetry, golang.org/x), go.mod requires
// cmd/distlock's version, newer than FerretDB's own: the packages compiled
// for one are then in the build cache for the other (make demo builds
// distlock first). It embeds FerretDB through its
// github.com/FerretDB/FerretDB/ferretdb package because the upstream command
// (cmd/ferretdb) panics at start-up when built from the module proxy (its
// generated build/version/version.txt is missing there). The embedded server
// has no debug HTTP listener, and it logs at the level given by -log-level
// (default error: at info and warn levels it logs every failed command,
// duplicate-key errors among them, which lock contention produces all the
// time).
//
// Usage:
//
//	ferretdb -listen 127.0.0.1:27117 -dir /path/to/state [-log-level error] [-pidfile FILE]
//	ferretdb -listen '' -listen-tls ADDR -tls-cert FILE -tls-key FILE \
//		-handler postgresql -postgresql-url postgres://user@host:port/db [-pidfile FILE]
//
// Authentication (FerretDB v1.24.2): clients authenticate with PLAIN, and
// FerretDB keeps their credentials unchecked. The SQLite backend ignores
// them; the PostgreSQL backend logs in to PostgreSQL with them, so
// PostgreSQL checks the password. A client that sends none gets
// -postgresql-url's user, so that URL must carry no password.
//
// With -listen-tls it also listens for TLS, with the server certificate
// -tls-cert and its key -tls-key. It takes no CA file: FerretDB would then
// require client certificates.
//
// On SQLite it also indexes _id the way FerretDB queries it (see
// idindex.go): without that, FerretDB v1.24.2 scans a whole collection for
// every find by _id.
//
// It writes its PID to -pidfile once it listens, and exits cleanly on SIGINT
// or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	listen, listenTLS, tlsCert, tlsKey string
	handler, dir, pgURL                string
	level, pidfile                     string
}

func run() error {
	var o options
	flag.StringVar(&o.listen, "listen", "127.0.0.1:27117", "TCP `address` to listen on (empty: none)")
	flag.StringVar(&o.listenTLS, "listen-tls", "", "TCP `address` to listen on for TLS (empty: none)")
	flag.StringVar(&o.tlsCert, "tls-cert", "", "the TLS server certificate's PEM `file` (with -listen-tls)")
	flag.StringVar(&o.tlsKey, "tls-key", "", "the TLS server key's PEM `file` (with -listen-tls)")
	flag.StringVar(&o.handler, "handler", "sqlite", "backend `name`: sqlite or postgresql")
	flag.StringVar(&o.dir, "dir", "", "SQLite data `directory` (required with -handler sqlite; created if missing)")
	flag.StringVar(&o.pgURL, "postgresql-url", "", "PostgreSQL `URL` (required with -handler postgresql; without a password)")
	flag.StringVar(&o.level, "log-level", "error", "log `level`: debug, info, warn or error")
	flag.StringVar(&o.pidfile, "pidfile", "", "write the PID to this `file` once listening")
	flag.Parse()
	if err := o.check(); err != nil {
		flag.Usage()
		return err
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(o.level)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))

	cfg := ferretdb.Config{
		Listener: ferretdb.ListenerConfig{
			TCP:         o.listen,
			TLS:         o.listenTLS,
			TLSCertFile: o.tlsCert,
			TLSKeyFile:  o.tlsKey,
		},
		Logger:        logger,
		Handler:       o.handler,
		PostgreSQLURL: o.pgURL,
	}
	where := o.pgURL
	if o.handler == "sqlite" {
		abs, err := filepath.Abs(o.dir)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return err
		}
		// SQLite's URI form wants a directory with a trailing slash. Write
		// transactions take SQLite's write lock when they begin
		// (_txlock=immediate), so that concurrent writers queue in the busy
		// handler instead of failing to upgrade a read lock and backing off
		// for seconds: lock contention means many concurrent writers.
		u := url.URL{Scheme: "file", Path: abs + "/", RawQuery: "_txlock=immediate"}
		cfg.SQLiteURL = u.String()
		where = abs
	}

	f, err := ferretdb.New(&cfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	if o.handler == "sqlite" {
		go keepIDIndexes(ctx, where, logger)
	}

	if o.pidfile != "" {
		tmp := o.pidfile + ".tmp"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			stop()
			<-done
			return err
		}
		if err := os.Rename(tmp, o.pidfile); err != nil {
			stop()
			<-done
			return err
		}
	}
	logger.Warn("listening", "uri", f.MongoDBURI(), "backend", where)
	return <-done
}

// check reports a missing or contradictory flag. A PostgreSQL URL with a
// password is refused: FerretDB would let clients that send no credentials
// in as its user.
func (o options) check() error {
	if flag.NArg() != 0 {
		return errors.New("no arguments are accepted")
	}
	if o.listen == "" && o.listenTLS == "" {
		return errors.New("-listen or -listen-tls is required")
	}
	if (o.listenTLS == "") != (o.tlsCert == "") || (o.listenTLS == "") != (o.tlsKey == "") {
		return errors.New("-listen-tls, -tls-cert and -tls-key go together")
	}
	switch o.handler {
	case "sqlite":
		if o.dir == "" || o.pgURL != "" {
			return errors.New("-handler sqlite needs -dir and takes no -postgresql-url")
		}
	case "postgresql":
		if o.pgURL == "" || o.dir != "" {
			return errors.New("-handler postgresql needs -postgresql-url and takes no -dir")
		}
		u, err := url.Parse(o.pgURL)
		if err != nil {
			return errors.New("-postgresql-url is not a URL") // unquoted: it might hold a password
		}
		if _, ok := u.User.Password(); ok || u.Query().Has("password") {
			return errors.New("-postgresql-url must have no password (clients give theirs)")
		}
	default:
		return fmt.Errorf("-handler %q: want sqlite or postgresql", o.handler)
	}
	return nil
}
