// Command ferretdb runs FerretDB (a MongoDB wire-protocol server) with its
// SQLite backend, for distlock's tests. scripts/services.sh builds and starts
// it; it is not part of the library.
//
// It lives in a module of its own so that FerretDB's dependencies stay out of
// the library's go.mod. It embeds FerretDB through its
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
//	ferretdb -listen 127.0.0.1:27017 -dir /path/to/state [-log-level error] [-pidfile FILE]
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

func run() error {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP `address` to listen on")
	dir := flag.String("dir", "", "SQLite data `directory` (required; created if missing)")
	level := flag.String("log-level", "error", "log `level`: debug, info, warn or error")
	pidfile := flag.String("pidfile", "", "write the PID to this `file` once listening")
	flag.Parse()
	if flag.NArg() != 0 || *dir == "" {
		flag.Usage()
		return errors.New("-dir is required and no arguments are accepted")
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))

	abs, err := filepath.Abs(*dir)
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

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: u.String(),
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	if *pidfile != "" {
		tmp := *pidfile + ".tmp"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			stop()
			<-done
			return err
		}
		if err := os.Rename(tmp, *pidfile); err != nil {
			stop()
			<-done
			return err
		}
	}
	logger.Warn("listening", "uri", f.MongoDBURI(), "dir", abs)
	return <-done
}
