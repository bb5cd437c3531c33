#!/usr/bin/env bash
# scripts/services.sh - throwaway backing services for distlock tests.
#
# Usage: scripts/services.sh up [fast|slow]|build|down|env|status|logs|restart-postgres|start-redis|start-ferretdb|start-nats|start-valkey|faults
#
#   up      Start 5 independent redis-server instances (127.0.0.1:7001-7005),
#           a throwaway PostgreSQL cluster (127.0.0.1:15432, database
#           "distlock", superuser "postgres", trust auth) and FerretDB, a
#           MongoDB wire-protocol server (127.0.0.1:27117, SQLite backend, no
#           auth), and the servers of services.d. Idempotent: servers
#           that are already running are left alone, dead ones are
#           restarted.
#   up fast Only Redis, PostgreSQL and MariaDB: the servers from Debian's
#           packages, up in seconds once installed (make demo's first
#           stage).
#   up slow Only FerretDB, etcd, ZooKeeper and NATS: the servers built from
#           source, and ZooKeeper on its JVM (make demo's second stage).
#   build   Build FerretDB, etcd and NATS into their caches, fetch
#           Debian's etcd 3.4 (apt-get download, for drivers/etcd's
#           settings test) and install ZooKeeper's JRE, starting
#           nothing: at nice 19 on one CPU, so that make demo's first
#           stage runs beside it. Ends with each step's time.
#   down    Stop only what `up` started (by the PIDs in our pidfiles) and
#           remove the state dir. Idempotent.
#   env     Print `export NAME=value` lines for eval. Starts nothing.
#   status  Print each server and whether it is up (exit 0 iff all are up).
#   restart-postgres
#           Stop our PostgreSQL (fast shutdown: sessions are cut, committed
#           data is kept) and start it again, for tests that check that
#           clients survive a server restart. Fails if it is not running.
#   start-redis
#           Start our redis-servers that are not running (empty), and
#           nothing else: for the Redis fault tests, which kill servers
#           while other packages' fault tests have etcd or ZooKeeper
#           members down on purpose, which `up` would start again.
#   start-ferretdb
#           Start our FerretDB if it is not running (its data kept), and
#           nothing else: for the MongoDB driver's fault runs, which kill it.
#   start-nats
#           Start our NATS nodes that are not running (their data kept), and
#           nothing else (services.d/nats.sh): for the NATS driver's tests,
#           which kill and hang nodes while other packages' tests run.
#   start-valkey
#           Start our Valkey servers (services.d/valkey.sh) that are not
#           running, and nothing else.
#   faults  Write $STATE/faults/DRIVER again, starting nothing: the servers
#           that `distlock bench --faults --servers-dir $STATE` may kill,
#           and their launchers (see "faults" below). `up` writes them too.
#
# Installs and builds print one line each when they end, with their time
# (and a progress line every 30s while they run); their output goes to
# logs/ in the state dir.
#
# Everything lives under ${DISTLOCK_SERVICES_DIR:-/tmp/distlock-services}:
#   logs/STEP.log                         the output of each install and build
#   redis-700N/{redis.pid,redis.log,launch.log}  one dir per redis (its cwd);
#                                         fault tests may signal redis.pid
#   postgres/{data/,postgres.log,initdb.log,.s.PGSQL.15432}
#   ferretdb/{data/,ferretdb.pid,ferretdb.log}   (its cwd)
#   faults/DRIVER    what distlock bench --faults may kill (see "faults")
# and a launcher, start, in each server's dir (redis-700N/, postgres/,
# ferretdb/), which starts that server again.
# plus a lock file next to it (${DISTLOCK_SERVICES_DIR}.lock) serializing
# concurrent up/down runs.
#
# The system instances on 6379/5432 are never touched: nothing is ever
# stopped by name, only by a PID we recorded and verified to be ours.
#
# Knobs (environment):
#   DISTLOCK_SERVICES_DIR      state dir (default /tmp/distlock-services)
#   DISTLOCK_SERVICES_TIMEOUT  seconds to wait for servers (default 30)
#   DISTLOCK_PG_BINDIR         force a PostgreSQL bin dir (must have initdb)
#   DISTLOCK_FERRETDB_BIN      use this FerretDB runner binary instead of
#                              building scripts/ferretdb
#   DISTLOCK_FERRETDB_CACHE    where built runners are kept (default
#                              ${XDG_CACHE_HOME:-$HOME/.cache}/distlock)
#
# FerretDB is not packaged: `up` builds scripts/ferretdb (a small program in a
# module of its own that embeds FerretDB v1.24.2; needs `go` and the module
# proxy) once, into the cache dir, named after the hash of its sources, and
# reuses it while they are unchanged. It runs before `up` takes its lock, so
# concurrent runs do not time out on it.
#
# Cold builds at nice 19 on one CPU, as `build` runs them, on this project's
# 2-core machine shared with other work (December 2026; wall times, which
# nice 19 stretches on a busy machine): alone, with empty caches, FerretDB
# 130-160s, etcd 110-200s, NATS 70s. In make demo's order, after distlock's
# build has put the standard library and the modules they share with it
# (gRPC, protobuf, etcd's client) in the build cache, the three compile 556
# packages (154 CPU seconds; 130s on a quiet machine: FerretDB 72s, etcd
# 33s, NATS 25s). With -trimpath, as they were built before, they shared
# nothing with distlock's build: 943 packages, 198 CPU seconds. Since then
# scripts/ferretdb requires cmd/distlock's versions of the modules they
# share (gRPC, protobuf, pgx, OpenTelemetry, golang.org/x): after distlock's
# build FerretDB compiles 180 packages in 44 CPU seconds instead of 324 in
# 68. About a fifth of FerretDB's compile time is its SQLite backend
# (modernc.org/sqlite, C translated to Go). Its PostgreSQL backend would
# spare that, but the MongoDB driver's design and tests rest on the SQLite
# one (drivers/mongodb/DESIGN.md), and make test restarts our PostgreSQL
# while the MongoDB tests run.
set -euo pipefail

readonly HOST=127.0.0.1

# Every port of our servers, in one table. None is a standard port, and
# none is in the kernel's ephemeral range (32768-60999 here), where an
# outgoing connection may hold it for a moment (a NATS node once failed to
# bind 42222 so, until it moved here). The
# machine's own Redis (6379), PostgreSQL (5432), MariaDB (3306), NATS (4222),
# MongoDB (27017), etcd (2379) and ZooKeeper (2181) stay untouched. A server
# added later takes its ports here; the files in services.d use these names.
readonly REDIS_PORTS=(7001 7002 7003 7004 7005)
readonly PG_PORT=15432
readonly MONGO_PORT=27117      # FerretDB, the MongoDB stand-in
readonly MONGOTLS_PORT=27217   # FerretDB with TLS and passwords (services.d/mongodb-tls.sh)
readonly ETCD_CLIENT_PORTS=(23791 23792 23793)
readonly ETCD_PEER_PORTS=(23801 23802 23803)
readonly ETCDAUTH_CLIENT_PORT=23794 # etcd with authentication
readonly ETCDAUTH_PEER_PORT=23804
readonly ZK_CLIENT_PORTS=(21811 21812 21813)
readonly ZK_PEER_PORTS=(28881 28882 28883)
readonly ZK_ELECTION_PORTS=(18881 18882 18883)
readonly MYSQL_PORT=13061      # MariaDB (services.d/mysql.sh)
readonly NATS_CLIENT_PORTS=(14221 14222 14223) # NATS JetStream (services.d/nats.sh)
readonly NATS_CLUSTER_PORTS=(14231 14232 14233)
readonly NATS_MONITOR_PORTS=(14241 14242 14243)
readonly VALKEY_PORTS=(7201 7202 7203 7204 7205) # Valkey 8 (services.d/valkey.sh)
# Taken by tools rather than by `up`: make demo's unsafe Redis (7110,
# scripts/demo-verify.sh). distlock bench's own Redis nodes take free ports
# the system picks (ephemeral ones), unless its --hung-port says otherwise.
readonly PG_DB=distlock
readonly PG_SUPERUSER=postgres
readonly PG_PREFERRED_MAJOR=15
readonly PG_FALLBACK_OS_USER=distlock # created only if no `postgres` OS user
readonly FERRET_COMM=distlock-ferret # the runner's name, as /proc/PID/comm shows it (15 chars)

STATE=${DISTLOCK_SERVICES_DIR:-/tmp/distlock-services}
[[ $STATE == /* ]] || STATE=$PWD/$STATE
STATE=${STATE%/}
[[ -n $STATE ]] || { echo "services.sh: refusing to use / as state dir" >&2; exit 1; }
readonly STATE
readonly MARKER=$STATE/.distlock-services
readonly LOCKFILE=$STATE.lock
readonly PG_DIR=$STATE/postgres
readonly PG_DATA=$PG_DIR/data
readonly PG_LOG=$PG_DIR/postgres.log
readonly TIMEOUT=${DISTLOCK_SERVICES_TIMEOUT:-30}
readonly FERRET_DIR=$STATE/ferretdb
readonly FERRET_SRC=$(cd "${BASH_SOURCE[0]%/*}" && pwd)/ferretdb

readonly REDIS_ADDRS="$HOST:7001,$HOST:7002,$HOST:7003,$HOST:7004,$HOST:7005"
readonly PG_DSN="postgres://$PG_SUPERUSER@$HOST:$PG_PORT/$PG_DB?sslmode=disable"
readonly MONGO_URI="mongodb://$HOST:$MONGO_PORT/"

PG_BINDIR=""
PG_OS_USER=""

log() { printf 'services.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "DISTLOCK_SERVICES_TIMEOUT must be a positive integer (got '$TIMEOUT')"

usage() {
	cat <<'EOF'
usage: scripts/services.sh <command>

commands:
  up      start every test server (idempotent): redis 127.0.0.1:7001-7005,
          postgres 127.0.0.1:15432, ferretdb 127.0.0.1:27117, and those of
          scripts/services.d (etcd, zookeeper, mysql, nats, valkey, ...)
  up fast start redis, postgres and mysql only (packaged: up in seconds)
  up slow start ferretdb, etcd, zookeeper and nats only (built from source,
          or on a JVM), building what is not in the cache
  build   build ferretdb, etcd and nats into the cache and install
          zookeeper's JRE, at nice 19 on one CPU; start nothing
  down    stop what `up` started and remove the state dir (idempotent)
  env     print `export NAME=value` lines (eval "$(scripts/services.sh env)")
  status  show whether each server is up (exit 0 iff all are up)
  restart-postgres
          stop our postgres (fast shutdown) and start it again
  start-redis
          start our redis-servers that are down, and nothing else
  start-ferretdb
          start our ferretdb if it is down (data kept), and nothing else
  start-nats
          start our nats nodes that are down (data kept), and nothing else
  start-valkey
          start our valkey servers 127.0.0.1:7201-7205 that are down, and
          nothing else
  faults  write $STATE/faults/DRIVER (what distlock bench --faults
          --servers-dir may kill, and how to start it again), starting
          nothing; up writes them too
EOF
}

# shell_quote VALUE: single-quote VALUE for safe eval (the DSN contains `?`).
shell_quote() {
	local s=$1
	printf "'%s'" "${s//\'/\'\\\'\'}"
}

# ---------------------------------------------------------------- helpers --

# port_open PORT: true if something accepts TCP connections on HOST:PORT.
port_open() {
	local fd
	{ exec {fd}<>"/dev/tcp/$HOST/$1"; } 2>/dev/null || return 1
	exec {fd}>&-
}

# who_listens PORT: best-effort description of the listener (for messages).
who_listens() {
	if command -v ss >/dev/null 2>&1; then
		ss -Hltnp "sport = :$1" 2>/dev/null | head -n 3 || true
	fi
}

# port_conflict PORT WHY: report a port held by someone else, then die.
port_conflict() {
	log "port $HOST:$1 is already in use by a process that is not ours ($2):"
	who_listens "$1" >&2
	die "refusing to touch it; free port $1 and retry (nothing was started)"
}

# pid_alive PID: PID exists and is not a zombie. (Daemons are orphans; in
# containers whose PID 1 is slow to reap, an exited one lingers as a zombie
# that `kill -0` still reports as alive.)
pid_alive() {
	local stat=""
	[[ $1 =~ ^[0-9]+$ ]] && kill -0 "$1" 2>/dev/null || return 1
	{ IFS= read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 0
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# pid_is_ours PID COMM DIR: PID is alive, runs COMM, and its cwd is DIR.
# redis-server chdirs to its --dir and the postmaster to its data dir, so
# this tells our processes apart from system ones and from reused PIDs.
# (Helpers avoid $(...) on the hot path: every fork costs milliseconds.)
pid_is_ours() {
	local pid=$1 comm=$2 dir=$3 actual=""
	pid_alive "$pid" || return 1
	{ IFS= read -r actual <"/proc/$pid/comm"; } 2>/dev/null || return 1
	[[ $actual == "$comm" ]] || return 1
	[[ /proc/$pid/cwd -ef $dir ]]
}

# read_pid FILE: sets PID_READ to the first line of FILE if it is a number.
PID_READ=""
read_pid() {
	PID_READ=""
	if [[ -r $1 ]]; then
		IFS= read -r PID_READ <"$1" || true
	fi
	[[ $PID_READ =~ ^[0-9]+$ ]] || PID_READ=""
}

# wait_pid_exit PID SECONDS: true once PID is gone.
wait_pid_exit() {
	local pid=$1 deadline=$((SECONDS + $2))
	while pid_alive "$pid"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}

# stop_pid WHAT PID: stops PID (one of ours, named WHAT in messages):
# SIGTERM, and SIGCONT in case a fault test SIGSTOPped it; SIGKILL if it
# has not exited 10s later. Fails if it is still alive 5s after that.
stop_pid() {
	local what=$1 pid=$2
	kill -TERM "$pid" 2>/dev/null || true
	kill -CONT "$pid" 2>/dev/null || true
	wait_pid_exit "$pid" 10 && return 0
	log "$what (pid $pid) ignored SIGTERM for 10s, sending SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	wait_pid_exit "$pid" 5 || { log "could not stop $what (pid $pid)"; return 1; }
}

# tls_certs DIR CA_NAME: a CA (DIR/ca.pem, ca.key) and a server
# certificate it signed for $HOST (DIR/server.crt, server.key), made with
# openssl unless all are there; each file appears whole (a rename).
tls_certs() {
	local d=$1 name=$2
	[[ -f $d/ca.pem && -f $d/server.crt && -f $d/server.key ]] && return 0
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$name" \
		-keyout "$d/ca.key" -out "$d/ca.pem.tmp" >/dev/null 2>&1 || die "openssl: CA"
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$HOST" \
		-keyout "$d/server.key.tmp" -out "$d/server.csr" >/dev/null 2>&1 || die "openssl: CSR"
	printf 'subjectAltName=IP:%s\n' "$HOST" >"$d/san.ext"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem.tmp" -CAkey "$d/ca.key" \
		-CAcreateserial -days 3650 -extfile "$d/san.ext" -out "$d/server.crt.tmp" >/dev/null 2>&1 ||
		die "openssl: server certificate"
	chmod 0755 "$d"
	chmod 0600 "$d/ca.key" "$d/server.key.tmp"
	chmod 0644 "$d/ca.pem.tmp" "$d/server.crt.tmp"
	mv -f "$d/server.key.tmp" "$d/server.key"
	mv -f "$d/server.crt.tmp" "$d/server.crt"
	mv -f "$d/ca.pem.tmp" "$d/ca.pem"
}

print_log_tail() {
	if [[ -s $1 ]]; then
		log "last lines of $1:"
		tail -n 25 "$1" >&2
	else
		log "(log $1 is empty or missing)"
	fi
}

# ------------------------------------------------------------ setup steps --
#
# Installs and builds are steps: each writes its output to a log of its own
# under $LOG_DIR and prints one line when it ends, with its time. A step
# still running after PROGRESS_EVERY seconds prints a progress line, and
# again each time that passes.

readonly LOG_DIR=$STATE/logs
readonly PROGRESS_EVERY=30

# GENTLE is set by `build`: its steps run at nice 19 on one CPU, so that
# what runs beside them (make demo's first stage) keeps the machine.
GENTLE=""

# STEP_TOTAL, when set, is how many packages a go build step compiles (go
# list's stale ones): its progress lines count those compiled so far (go
# build -v prints each).
STEP_TOTAL=""

# STEP_KEEP, when set, lets a step's command run on if services.sh is
# stopped: an apt-get cut short leaves dpkg half done.
STEP_KEEP=""

# STEP_TIMES, when set, is a file that each step appends "LABEL Ns" to:
# `build` prints them together at its end.
STEP_TIMES=""

# ensure_state_dir: creates the state dir and its log dir, refusing a dir
# that services.sh did not create. The marker comes first, so that a
# concurrent run never sees the dir with files but no marker.
ensure_state_dir() {
	state_dir_is_ours || die "$STATE exists and was not created by services.sh (no $MARKER); refusing to use it"
	[[ -d $STATE ]] || mkdir -p "$STATE"
	: >>"$MARKER"
	[[ -d $LOG_DIR ]] || mkdir -p "$LOG_DIR"
}

# gentle_prefix: sets GENTLE_CMD to the command words that run a step at
# nice 19 on CPU 0 when GENTLE is set (GOMAXPROCS=1 keeps the go command and
# its compilers to one thread where taskset cannot pin them).
GENTLE_CMD=()
gentle_prefix() {
	GENTLE_CMD=()
	[[ -n $GENTLE ]] || return 0
	GENTLE_CMD=(env GOMAXPROCS=1 nice -n 19)
	if taskset -c 0 true 2>/dev/null; then
		GENTLE_CMD+=(taskset -c 0)
	fi
}

# step LABEL LOG CMD...: runs CMD as a step named LABEL, its output in
# $LOG_DIR/LOG.log (started afresh), and prints its line. On failure it
# prints the log's last lines and returns CMD's status. CMD runs in a
# session of its own, so that a signal to services.sh ends it with all its
# children (a go build's compilers).
step() {
	local label=$1 logf=$LOG_DIR/$2.log start=$SECONDS next pid rc=0 count
	shift 2
	ensure_state_dir
	: >"$logf"
	setsid "$@" 9>&- </dev/null >>"$logf" 2>&1 &
	pid=$!
	if [[ -n $STEP_KEEP ]]; then
		trap 'exit 143' TERM INT HUP
	else
		trap 'kill -TERM -- -'"$pid"' 2>/dev/null; exit 143' TERM INT HUP
	fi
	next=$((start + PROGRESS_EVERY))
	while pid_alive "$pid"; do
		if ((SECONDS >= next)); then
			count=""
			if [[ -n $STEP_TOTAL ]]; then
				count=", $(grep -cv '^go: ' "$logf" || true) of $STEP_TOTAL compiled"
			fi
			log "$label: $((SECONDS - start))s so far$count"
			next=$((next + PROGRESS_EVERY))
		fi
		sleep 0.2
	done
	wait "$pid" || rc=$?
	trap 'exit 143' TERM INT HUP
	if ((rc != 0)); then
		print_log_tail "$logf"
		log "$label: FAILED after $((SECONDS - start))s (exit $rc; its output: $logf)"
		return "$rc"
	fi
	log "$label: done in $((SECONDS - start))s"
	[[ -z $STEP_TIMES ]] || printf '%s %ss\n' "$label" "$((SECONDS - start))" >>"$STEP_TIMES"
}

# GO_SERVER_FLAGS are the go build flags of the servers built from source
# (FerretDB, etcd, NATS); the caches' names hash them with the sources.
# Their packages are compiled as go build and go run compile ours (no
# -trimpath), so a cold machine compiles the standard library once for all.
# -s -w: no symbol table or DWARF, which the linker then need not write.
# -buildvcs=false: no git run for a stamp that nobody reads.
readonly GO_SERVER_FLAGS=(-mod=readonly -buildvcs=false "-ldflags=-s -w")

# go_build LABEL NAME DIR OUT FLAGS...: builds the main package of the
# module in DIR (outside any go.work) into OUT with the go build flags
# FLAGS, as two steps: downloading what it imports and finding the packages
# that are not in the build cache (log NAME-download), then compiling and
# linking (NAME-compile). Both go to the module proxy only for what the
# build needs.
go_build() {
	local label=$1 name=$2 dir=$3 out=$4 total
	shift 4
	command -v go >/dev/null 2>&1 || { log "$label: needs Go (https://go.dev/dl/)"; return 1; }
	gentle_prefix
	step "$label: download" "$name-download" \
		env -C "$dir" GOWORK=off "${GENTLE_CMD[@]}" go list -deps -f '{{if .Stale}}stale {{.ImportPath}}{{end}}' "$@" . || return 1
	total=$(grep -c '^stale ' "$LOG_DIR/$name-download.log" || true)
	STEP_TOTAL=$total step "$label: compile (packages not in the build cache: $total)" "$name-compile" \
		env -C "$dir" GOWORK=off "${GENTLE_CMD[@]}" go build -v "$@" -o "$out" . || return 1
}

# apt_install PACKAGE...: installs the packages with apt-get, as a step.
# Our own installs take turns (make demo runs `up fast` and `build` at
# once), and apt-get waits up to 10 minutes for another's dpkg lock.
apt_install() {
	[[ $EUID -eq 0 ]] || die "need to install $* but not running as root; install it and retry"
	command -v apt-get >/dev/null 2>&1 || die "need to install $* but apt-get is not available"
	gentle_prefix
	STEP_KEEP=1 step "apt-get install $*" "apt-$1" env DEBIAN_FRONTEND=noninteractive "${GENTLE_CMD[@]}" \
		flock -w 900 "$STATE.apt.lock" sh -c \
		'apt-get -o DPkg::Lock::Timeout=600 update -q && apt-get -o DPkg::Lock::Timeout=600 install -y -q "$@"' \
		apt_install "$@"
}

# ------------------------------------------------------------------ redis --

ensure_redis_binaries() {
	if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
		apt_install redis-server
	fi
	command -v redis-server >/dev/null 2>&1 || die "redis-server not found after install"
	command -v redis-cli >/dev/null 2>&1 || die "redis-cli not found after install"
}

# redis_our_pid PORT: true (and OUR_PID set) if our pidfile for PORT names
# a live redis-server running in our dir.
OUR_PID=""
redis_our_pid() {
	local dir=$STATE/redis-$1
	OUR_PID=""
	read_pid "$dir/redis.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" redis-server "$dir" || return 1
	OUR_PID=$PID_READ
}

# redis_ping PORT: RESP "PING" -> "+PONG" (same as `redis-cli -p PORT ping`,
# but in-shell, so no fork; runs 5x on every `up`).
redis_ping() {
	local fd reply=""
	{ exec {fd}<>"/dev/tcp/$HOST/$1"; } 2>/dev/null || return 1
	trap '' PIPE # a peer that hangs up must not kill us
	{ printf 'PING\r\n' >&"$fd"; } 2>/dev/null || true
	IFS= read -r -t 2 reply <&"$fd" || true
	trap - PIPE
	exec {fd}>&-
	[[ $reply == $'+PONG\r' ]]
}

# redis_start PORT: starts our redis on PORT unless it is already running.
# Records in REDIS_LOG_OFFSET[PORT] where this start's log output begins
# (empty if it was already running).
declare -A REDIS_LOG_OFFSET=()
redis_start() {
	local port=$1 dir=$STATE/redis-$1 offset
	REDIS_LOG_OFFSET[$port]=""
	redis_our_pid "$port" && return 0
	rm -f "$dir/redis.pid" # stale (dead, or PID reused by someone else)
	port_open "$port" && port_conflict "$port" "no live pidfile in $dir"
	mkdir -p "$dir"
	offset=$(stat -c %s "$dir/redis.log" 2>/dev/null || echo 0)
	redis_write_launcher "$port"
	# 9>&- : don't leak our lock fd to it.
	if ! "$dir/start" 9>&-; then
		print_log_tail "$dir/launch.log"
		die "redis-server on port $port failed to start"
	fi
	REDIS_LOG_OFFSET[$port]=$offset
}

# redis_write_launcher PORT: writes start, the launcher of our redis on
# PORT, which starts it daemonized, without persistence, and returns.
# distlock bench --faults runs it to start a server it killed (see
# faults_write).
redis_write_launcher() {
	local port=$1 dir=$STATE/redis-$1 bin
	bin=$(command -v redis-server) || die "redis-server not found"
	mkdir -p "$dir"
	cat >"$dir/start.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/services.sh: starts the test redis on $HOST:$port,
# daemonized, in this dir. Errors before daemonizing (bad arguments) go to
# launch.log; after that redis writes to redis.log.
exec '$bin' --bind $HOST --port $port --save "" --appendonly no --daemonize yes \\
	--pidfile '$dir/redis.pid' --logfile '$dir/redis.log' --dir '$dir' \\
	</dev/null >'$dir/launch.log' 2>&1
EOF
	chmod +x "$dir/start.tmp"
	mv -f "$dir/start.tmp" "$dir/start"
}

# redis_wait PORT: waits until our redis on PORT answers PING (sets OUR_PID).
redis_wait() {
	local port=$1 dir=$STATE/redis-$1 deadline offset
	offset=${REDIS_LOG_OFFSET[$port]:-0}
	deadline=$((SECONDS + TIMEOUT))
	while :; do
		redis_our_pid "$port" && redis_ping "$port" && return 0
		# The daemon writes its pidfile only after binding; a failed bind
		# logs "... aborting." instead, so don't sit out the whole timeout.
		if [[ ! -e $dir/redis.pid ]] &&
			tail -c "+$((offset + 1))" "$dir/redis.log" 2>/dev/null | grep -qE 'aborting|Fatal|FATAL'; then
			break
		fi
		((SECONDS < deadline)) || break
		sleep 0.05
	done
	print_log_tail "$dir/redis.log"
	die "redis on $HOST:$port did not come up within ${TIMEOUT}s"
}

redis_stop() {
	local port=$1 dir=$STATE/redis-$1 pid
	[[ -d $dir ]] || return 0
	if redis_our_pid "$port"; then
		pid=$OUR_PID
		stop_pid "redis $port" "$pid" || exit 1
		log "redis $HOST:$port stopped (pid $pid)"
	fi
	rm -f "$dir/redis.pid"
}

# --------------------------------------------------------------- postgres --

# try_pg_bindir DIR: sets PG_BINDIR=DIR if it holds the tools we need.
try_pg_bindir() {
	local tool
	[[ -n $1 ]] || return 1
	for tool in initdb pg_ctl postgres pg_isready psql; do
		[[ -x $1/$tool ]] || return 1
	done
	PG_BINDIR=$1
}

# find_pg_bindir: sets PG_BINDIR. Preference: $DISTLOCK_PG_BINDIR,
# /usr/lib/postgresql/15/bin, `pg_config --bindir`, the newest
# /usr/lib/postgresql/*/bin, then wherever `initdb` on PATH really lives.
# (Debian's /usr/bin/psql etc. are pg_wrapper scripts; we call the real ones.)
find_pg_bindir() {
	local d
	[[ -n $PG_BINDIR ]] && return 0
	try_pg_bindir "${DISTLOCK_PG_BINDIR:-}" && return 0
	[[ -z ${DISTLOCK_PG_BINDIR:-} ]] ||
		die "DISTLOCK_PG_BINDIR=$DISTLOCK_PG_BINDIR lacks one of initdb pg_ctl postgres pg_isready psql"
	try_pg_bindir "/usr/lib/postgresql/$PG_PREFERRED_MAJOR/bin" && return 0
	if command -v pg_config >/dev/null 2>&1; then
		try_pg_bindir "$(pg_config --bindir 2>/dev/null || true)" && return 0
	fi
	while IFS= read -r d; do
		try_pg_bindir "$d" && return 0
	done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -rV || true)
	if d=$(command -v initdb 2>/dev/null); then
		d=$(readlink -f "$d")
		try_pg_bindir "${d%/*}" && return 0
	fi
	return 1
}

ensure_pg_binaries() {
	find_pg_bindir && return 0
	apt_install "postgresql-$PG_PREFERRED_MAJOR" || apt_install postgresql
	find_pg_bindir || die "PostgreSQL binaries (initdb, pg_ctl, ...) not found even after apt-get install"
}

# pick_pg_os_user: PostgreSQL refuses to run as root. As root we run it as
# the `postgres` OS user if it exists (Debian's packages create it), else as
# a system user `distlock` that we create. Non-root: run as ourselves.
pick_pg_os_user() {
	if [[ $EUID -ne 0 ]]; then
		PG_OS_USER=$(id -un)
	elif id -u postgres >/dev/null 2>&1; then
		PG_OS_USER=postgres
	else
		if ! id -u "$PG_FALLBACK_OS_USER" >/dev/null 2>&1; then
			log "creating system user $PG_FALLBACK_OS_USER to run PostgreSQL"
			useradd --system --no-create-home --home-dir /nonexistent \
				--shell /usr/sbin/nologin "$PG_FALLBACK_OS_USER"
		fi
		PG_OS_USER=$PG_FALLBACK_OS_USER
	fi
}

# as_user USER CMD...: run CMD as USER (directly if we already are USER).
# Runs from / so the tools don't trip over an unreadable cwd; 9>&- keeps
# the postmaster from inheriting our lock fd.
as_user() {
	local user=$1
	shift
	if [[ $EUID -eq 0 && $user != root ]]; then
		(cd / && runuser -u "$user" -- "$@" 9>&-)
	else
		(cd / && "$@" 9>&-)
	fi
}

# pg_our_pid: true (and OUR_PID set) if postmaster.pid names a live
# postgres whose cwd is our data dir.
pg_our_pid() {
	OUR_PID=""
	read_pid "$PG_DATA/postmaster.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" postgres "$PG_DATA" || return 1
	OUR_PID=$PID_READ
}

pg_ready() {
	"$PG_BINDIR/pg_isready" -q -h "$HOST" -p "$PG_PORT" -t 2
}

pg_psql() {
	PGSSLMODE=disable PGCONNECT_TIMEOUT=5 "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
		"postgres://$PG_SUPERUSER@$HOST:$PG_PORT/postgres?sslmode=disable" "$@"
}

pg_init() {
	[[ -f $PG_DIR/.initialized && -f $PG_DATA/PG_VERSION ]] && return 0
	rm -rf "$PG_DATA" # half-done earlier attempt
	log "initdb $PG_DATA (as OS user $PG_OS_USER, $PG_BINDIR)"
	if ! as_user "$PG_OS_USER" "$PG_BINDIR/initdb" -D "$PG_DATA" -U "$PG_SUPERUSER" \
		-A trust -E UTF8 --locale=C --no-sync >"$PG_DIR/initdb.log" 2>&1; then
		print_log_tail "$PG_DIR/initdb.log"
		die "initdb failed"
	fi
	cat >>"$PG_DATA/postgresql.conf" <<EOF

# ---- added by scripts/services.sh (throwaway test cluster) ----
listen_addresses = '$HOST'
port = $PG_PORT
unix_socket_directories = '$PG_DIR'
fsync = off
synchronous_commit = off
full_page_writes = off
# drivers/postgres's BenchmarkHandWritten opens seven pools of up to 32
max_connections = 200
EOF
	: >"$PG_DIR/.initialized"
}

pg_start() {
	pg_our_pid && return 0 # running (maybe still starting; pg_wait handles that)
	port_open "$PG_PORT" && port_conflict "$PG_PORT" "no live postmaster.pid in $PG_DATA"
	pick_pg_os_user
	mkdir -p "$PG_DIR"
	if [[ $EUID -eq 0 ]]; then
		chown "$PG_OS_USER:" "$PG_DIR"
		chmod 0755 "$PG_DIR"
	fi
	as_user "$PG_OS_USER" test -w "$PG_DIR" -a -x "$PG_DIR" ||
		die "OS user $PG_OS_USER cannot write $PG_DIR; is every parent of $STATE traversable by it? (set DISTLOCK_SERVICES_DIR)"
	pg_init
	# A postmaster.pid whose PID now belongs to an unrelated process would
	# make the postmaster refuse to start; ours is known to be dead here.
	rm -f "$PG_DATA/postmaster.pid"
	pg_write_launcher
	if ! "$PG_DIR/start" 9>&- >/dev/null 2>&1; then
		print_log_tail "$PG_LOG"
		die "postgres on $HOST:$PG_PORT failed to start"
	fi
	read_pid "$PG_DATA/postmaster.pid"
	log "postgres $HOST:$PG_PORT started (pid $PID_READ, OS user $PG_OS_USER)"
}

# pg_write_launcher: writes start, the launcher of our postgres, which
# starts it as PG_OS_USER and returns once it accepts connections (pg_ctl
# -w). distlock bench --faults runs it to start the server it killed (see
# faults_write). Needs PG_BINDIR and PG_OS_USER.
pg_write_launcher() {
	local runas=""
	[[ $EUID -ne 0 || $PG_OS_USER == root ]] || runas="runuser -u '$PG_OS_USER' --"
	cat >"$PG_DIR/start.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/services.sh: starts the test PostgreSQL on $HOST:$PG_PORT
# and returns once it accepts connections, or fails.
cd / || exit 1
exec $runas '$PG_BINDIR/pg_ctl' start -D '$PG_DATA' -l '$PG_LOG' -w -t $TIMEOUT -s
EOF
	chmod 0755 "$PG_DIR/start.tmp"
	mv -f "$PG_DIR/start.tmp" "$PG_DIR/start"
}

# pg_wait: waits until our postgres answers queries, then makes sure the
# database exists. (One psql per try instead of pg_isready + psql: faster.)
pg_wait() {
	local deadline=$((SECONDS + TIMEOUT)) out=""
	while :; do
		if pg_our_pid && out=$(pg_psql -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'" 2>&1); then
			break
		fi
		if ((SECONDS >= deadline)) || ! pg_our_pid; then
			[[ -z $out ]] || log "psql: $out"
			print_log_tail "$PG_LOG"
			die "postgres on $HOST:$PG_PORT did not come up within ${TIMEOUT}s"
		fi
		sleep 0.05
	done
	if [[ $out != 1 ]]; then
		pg_psql -c "CREATE DATABASE $PG_DB" || die "could not create database $PG_DB"
		log "created database $PG_DB"
	fi
}

pg_stop() {
	local pid owner
	[[ -d $PG_DATA ]] || return 0
	pg_our_pid || return 0
	pid=$OUR_PID
	owner=$(stat -c %U "$PG_DATA")
	if ! find_pg_bindir ||
		! as_user "$owner" "$PG_BINDIR/pg_ctl" stop -D "$PG_DATA" -m fast -w -t 30 -s >/dev/null 2>&1; then
		if pid_is_ours "$pid" postgres "$PG_DATA"; then
			log "pg_ctl stop failed; sending SIGQUIT (immediate shutdown) to postmaster $pid"
			kill -QUIT "$pid" 2>/dev/null || true
			kill -CONT "$pid" 2>/dev/null || true
			wait_pid_exit "$pid" 10 || kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait_pid_exit "$pid" 10 || die "could not stop postgres (pid $pid)"
	log "postgres $HOST:$PG_PORT stopped (pid $pid)"
}

# --------------------------------------------------------------- ferretdb --

FERRET_BIN=""

# ferret_build: sets FERRET_BIN to the runner binary, building it into the
# cache unless a binary built from the same sources and flags is there
# already. Safe to run concurrently: each build goes to a temporary name and
# is renamed into place. Runs without our lock (a cold build outlasts the
# lock's timeout).
ferret_build() {
	local cache hash tmp
	if [[ -n ${DISTLOCK_FERRETDB_BIN:-} ]]; then
		[[ -x $DISTLOCK_FERRETDB_BIN ]] || die "DISTLOCK_FERRETDB_BIN=$DISTLOCK_FERRETDB_BIN is not an executable"
		FERRET_BIN=$DISTLOCK_FERRETDB_BIN
		return 0
	fi
	[[ -f $FERRET_SRC/go.mod && -f $FERRET_SRC/go.sum && -f $FERRET_SRC/main.go ]] ||
		die "FerretDB runner sources not found in $FERRET_SRC"
	cache=${DISTLOCK_FERRETDB_CACHE:-${XDG_CACHE_HOME:-${HOME:-${STATE%/*}}/.cache}/distlock}
	hash=$({ cat "$FERRET_SRC/go.mod" "$FERRET_SRC/go.sum" "$FERRET_SRC"/*.go; echo "${GO_SERVER_FLAGS[*]}"; } | sha256sum)
	hash=${hash:0:16}
	FERRET_BIN=$cache/ferretdb-$hash/$FERRET_COMM
	[[ -x $FERRET_BIN ]] && return 0
	mkdir -p "${FERRET_BIN%/*}"
	tmp=$FERRET_BIN.tmp.$$
	if ! go_build "FerretDB runner" ferretdb "$FERRET_SRC" "$tmp" "${GO_SERVER_FLAGS[@]}"; then
		rm -f "$tmp"
		die "could not build the FerretDB runner in $FERRET_SRC (or set DISTLOCK_FERRETDB_BIN)"
	fi
	mv -f "$tmp" "$FERRET_BIN"
}

# ferret_our_pid: true (and OUR_PID set) if our pidfile names a live runner
# whose cwd is our dir.
ferret_our_pid() {
	OUR_PID=""
	read_pid "$FERRET_DIR/ferretdb.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" "$FERRET_COMM" "$FERRET_DIR" || return 1
	OUR_PID=$PID_READ
}

# ferret_start: starts our FerretDB unless it is already running. The runner
# writes its pidfile once it listens (so a live pidfile means it is bound).
# It logs errors only: at info and warn levels FerretDB logs every failed
# command, duplicate keys among them, which lock contention produces all the
# time. It has no debug HTTP listener.
FERRET_LOG_OFFSET=""
ferret_start() {
	FERRET_LOG_OFFSET=""
	ferret_our_pid && return 0
	rm -f "$FERRET_DIR/ferretdb.pid"
	port_open "$MONGO_PORT" && port_conflict "$MONGO_PORT" "no live pidfile in $FERRET_DIR"
	mkdir -p "$FERRET_DIR/data"
	FERRET_LOG_OFFSET=$(stat -c %s "$FERRET_DIR/ferretdb.log" 2>/dev/null || echo 0)
	ferret_write_launcher
	"$FERRET_DIR/start" 9>&-
}

# ferret_write_launcher: writes start, the launcher of our FerretDB, which
# starts it detached and returns. distlock bench --faults runs it to start
# the server it killed (see faults_write). Needs FERRET_BIN.
ferret_write_launcher() {
	mkdir -p "$FERRET_DIR/data"
	cat >"$FERRET_DIR/start.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/services.sh: starts the test FerretDB on $HOST:$MONGO_PORT
# in this dir, detached; it writes ferretdb.pid once it listens.
cd '$FERRET_DIR' || exit 1
(exec setsid '$FERRET_BIN' -listen $HOST:$MONGO_PORT -dir data -log-level error -pidfile ferretdb.pid \\
	</dev/null >>ferretdb.log 2>&1 &)
EOF
	chmod +x "$FERRET_DIR/start.tmp"
	mv -f "$FERRET_DIR/start.tmp" "$FERRET_DIR/start"
}

# ferret_wait: waits until our FerretDB has written its pidfile (it is
# listening) and accepts connections.
ferret_wait() {
	local deadline=$((SECONDS + TIMEOUT))
	while :; do
		ferret_our_pid && port_open "$MONGO_PORT" && break
		if ((SECONDS >= deadline)); then
			print_log_tail "$FERRET_DIR/ferretdb.log"
			die "ferretdb on $HOST:$MONGO_PORT did not come up within ${TIMEOUT}s"
		fi
		sleep 0.05
	done
	[[ -z $FERRET_LOG_OFFSET ]] || log "ferretdb $HOST:$MONGO_PORT started (pid $OUR_PID, $FERRET_BIN)"
}

ferret_stop() {
	local pid
	[[ -d $FERRET_DIR ]] || return 0
	if ferret_our_pid; then
		pid=$OUR_PID
		stop_pid ferretdb "$pid" || exit 1
		log "ferretdb $HOST:$MONGO_PORT stopped (pid $pid)"
	fi
	rm -f "$FERRET_DIR/ferretdb.pid"
}

# ----------------------------------------------------------------- faults --

# The contract with `distlock bench --faults --servers-dir $STATE`: for
# each driver, the file faults/DRIVER lists the servers bench may kill while
# it measures that driver, and how to start each again. Its lines are
# comments (#), or tab-separated fields:
#   durability TEXT     how the servers keep what they acknowledged (fsync)
#   server NAME ADDR PIDFILE CWD START STATUS
#                       a server: its client address (host:port), the file
#                       holding its PID, the cwd its process runs in, the
#                       launcher that starts it again (it returns once the
#                       server is started, or fails), and where it reports
#                       its role ("-" if nowhere)
# Bench kills a server only if the DSN it measures names ADDR, and only the
# PID in PIDFILE whose process is alive and runs in CWD. One server named:
# it is killed and started again at once. Several (a quorum): one of them
# (the leader where STATUS tells it) is killed, and started again at the
# end. `up` writes the files; `faults` writes them again, starting nothing.

FAULTS_FILE=""

# faults_begin DRIVER DURABILITY: starts the file of DRIVER.
faults_begin() {
	mkdir -p "$STATE/faults"
	FAULTS_FILE=$STATE/faults/$1.tmp.$$
	{
		printf '# Written by scripts/services.sh: the servers that distlock bench --faults\n'
		printf '# may kill for driver %s (see "faults" in scripts/services.sh).\n' "$1"
		printf 'durability\t%s\n' "$2"
	} >"$FAULTS_FILE"
}

# faults_server NAME ADDR PIDFILE CWD START STATUS: adds a server.
faults_server() {
	local IFS=$'\t'
	printf 'server\t%s\n' "$*" >>"$FAULTS_FILE"
}

# faults_end: puts the file in place whole.
faults_end() { mv -f "$FAULTS_FILE" "${FAULTS_FILE%.tmp.*}"; }

# faults_write: writes the files of Redis's, PostgreSQL's and FerretDB's
# drivers (with their launchers), then those of services.d's (NAME_faults),
# for the services wanted: `up fast` and `up slow` each write their own.
faults_write() {
	local d port dir
	if want redis; then
		for port in "${REDIS_PORTS[@]}"; do
			redis_write_launcher "$port"
		done
		for d in goredis redigo rueidis valkey; do
			faults_begin "$d" 'Redis without persistence (--save "" --appendonly no): a master restarted comes back empty'
			for port in "${REDIS_PORTS[@]}"; do
				dir=$STATE/redis-$port
				faults_server "redis-$port" "$HOST:$port" "$dir/redis.pid" "$dir" "$dir/start" -
			done
			faults_end
		done
	fi
	if want postgres && [[ -d $PG_DATA ]] && find_pg_bindir; then
		pick_pg_os_user
		pg_write_launcher
		faults_begin postgres "PostgreSQL with fsync = off, synchronous_commit = off, full_page_writes = off"
		faults_server postgres "$HOST:$PG_PORT" "$PG_DATA/postmaster.pid" "$PG_DATA" "$PG_DIR/start" -
		faults_end
	fi
	if want ferretdb && [[ -z $FERRET_BIN ]] && ferret_our_pid; then
		FERRET_BIN=$(readlink -f "/proc/$OUR_PID/exe")
	fi
	if want ferretdb && [[ -n $FERRET_BIN ]]; then
		ferret_write_launcher
		faults_begin mongodb "FerretDB v1 on SQLite in WAL mode, its synchronous setting SQLite's default (neither FerretDB nor we set it)"
		faults_server ferretdb "$HOST:$MONGO_PORT" "$FERRET_DIR/ferretdb.pid" "$FERRET_DIR" "$FERRET_DIR/start" -
		faults_end
	fi
	extra_each faults
}

# --------------------------------------------------------------- commands --

# with_lock: serialize concurrent up/down (e.g. parallel test runners).
# More services live in scripts/services.d/NAME.sh, one file each, sourced
# here. A file appends NAME to EXTRA_SERVICES and defines, all optional
# but start/wait/stop: NAME_prepare (before the lock: builds, downloads),
# NAME_preflight (refuse before anything starts if a port is taken),
# NAME_start, NAME_wait, NAME_stop, NAME_env (export lines), NAME_status
# (print lines, fail if not all up), NAME_faults (its drivers' files in
# faults/, with faults_begin, faults_server and faults_end). They use this
# file's helpers (log, die, port_open, pid_alive, pid_is_ours, read_pid,
# apt_install, go_build, $STATE, $HOST, $TIMEOUT) and keep to ports of their
# own. `up` starts every service; `up fast` and `up slow` only those named
# in GROUP_FAST and GROUP_SLOW below.
EXTRA_SERVICES=()
for f in "${BASH_SOURCE[0]%/*}"/services.d/*.sh; do
	[[ -e $f ]] || continue
	# shellcheck source=/dev/null
	source "$f"
done

# The groups that `up GROUP` starts, make demo's two stages. fast: servers
# from Debian's packages, up in seconds once installed. slow: those built
# from source (FerretDB, etcd, NATS) and ZooKeeper, whose JRE is a large
# install. `up` alone starts both and the tests' extras (the TLS and
# password servers, etcd-auth, Valkey), which depend on them.
readonly GROUP_FAST="redis postgres mysql"
readonly GROUP_SLOW="ferretdb etcd zookeeper nats"

# SELECTED names the services a command works on; empty means all.
SELECTED=""

# want NAME: true if the command works on service NAME.
want() { [[ -z $SELECTED || " $SELECTED " == *" $1 "* ]]; }

# extra_each STEP: run NAME_STEP for every extra service that defines it
# (and is wanted), all of them even if one fails, and fail if any did.
extra_each() {
	local s ok=0
	for s in "${EXTRA_SERVICES[@]}"; do
		want "$s" || continue
		if declare -F "${s}_$1" >/dev/null; then
			"${s}_$1" || ok=1
		fi
	done
	return $ok
}

with_lock() {
	if command -v flock >/dev/null 2>&1; then
		[[ -d ${LOCKFILE%/*} ]] || mkdir -p "${LOCKFILE%/*}"
		exec 9>>"$LOCKFILE"
		flock -w $((TIMEOUT * 2)) 9 || die "timed out waiting for lock $LOCKFILE"
	fi
}

# state_dir_is_ours: the state dir is absent, empty, or carries our marker.
state_dir_is_ours() {
	[[ ! -e $STATE ]] && return 0
	[[ -d $STATE ]] || return 1
	[[ -e $MARKER ]] && return 0
	[[ -z $(ls -A "$STATE") ]]
}

cmd_up() {
	local port start=$SECONDS
	if want ferretdb; then
		ferret_build # before the lock: a cold build takes minutes
	fi
	extra_each prepare
	with_lock
	state_dir_is_ours || die "$STATE exists and was not created by services.sh (no $MARKER); refusing to use it"
	[[ -d $STATE ]] || mkdir -p "$STATE"
	: >>"$MARKER"
	if want redis; then
		ensure_redis_binaries
	fi
	if want postgres; then
		ensure_pg_binaries
	fi

	# Preflight: refuse before starting anything if a port is held by a
	# process that is not ours.
	if want redis; then
		for port in "${REDIS_PORTS[@]}"; do
			redis_our_pid "$port" || ! port_open "$port" ||
				port_conflict "$port" "no live pidfile in $STATE/redis-$port"
		done
	fi
	if want postgres; then
		pg_our_pid || ! port_open "$PG_PORT" ||
			port_conflict "$PG_PORT" "no live postmaster.pid in $PG_DATA"
	fi
	if want ferretdb; then
		ferret_our_pid || ! port_open "$MONGO_PORT" ||
			port_conflict "$MONGO_PORT" "no live pidfile in $FERRET_DIR"
	fi
	extra_each preflight

	# Launch everything first, then wait. Postgres goes first: its start
	# (initdb, pg_ctl -w) is the likeliest to fail, and then we have not
	# started anything else. The redis daemons come up while we wait.
	if want postgres; then
		pg_start
	fi
	if want redis; then
		for port in "${REDIS_PORTS[@]}"; do
			redis_start "$port"
		done
	fi
	if want ferretdb; then
		ferret_start
	fi
	extra_each start

	if want redis; then
		for port in "${REDIS_PORTS[@]}"; do
			redis_wait "$port"
			[[ -z ${REDIS_LOG_OFFSET[$port]} ]] || log "redis $HOST:$port started (pid $OUR_PID)"
		done
	fi
	if want postgres; then
		pg_wait
	fi
	if want ferretdb; then
		ferret_wait
	fi
	extra_each wait
	faults_write || die "could not write $STATE/faults"
	log "${SELECTED:-all services} up in $((SECONDS - start))s (state dir $STATE)"
}

# cmd_build: builds the servers built from source (FerretDB, etcd, NATS)
# into their caches and installs ZooKeeper's JRE, the slow group's
# preparation, and starts nothing. It runs at nice 19 on one CPU (GENTLE)
# and ends with a line of each step's time. `up slow` after it starts the
# servers in seconds.
cmd_build() {
	local start=$SECONDS jre times
	GENTLE=1
	SELECTED=$GROUP_SLOW
	ensure_state_dir
	STEP_TIMES=$LOG_DIR/build-times.$$
	: >"$STEP_TIMES"
	# The JRE's install runs beside the builds of etcd and NATS: it waits
	# on the network and dpkg more than on the CPU. It starts after
	# FerretDB's, by which time the installs of `up fast`, which make demo
	# runs at once, are done. If a build fails or we are stopped, the
	# install still gets to finish: an apt-get cut short leaves dpkg half
	# done.
	trap 'rm -f "$STEP_TIMES"' EXIT
	trap 'exit 143' TERM INT HUP
	ferret_build
	(zookeeper_prepare) &
	jre=$!
	trap 'wait '"$jre"'; rm -f "$STEP_TIMES"' EXIT
	etcd_prepare
	nats_prepare
	wait "$jre" || die "the JRE's install failed (its output is in $LOG_DIR)"
	trap - EXIT
	times=$(paste -sd, "$STEP_TIMES" | sed 's/,/, /g')
	rm -f "$STEP_TIMES"
	log "build: done in $((SECONDS - start))s${times:+ ($times)}"
}

cmd_down() {
	local port
	[[ -e $STATE ]] || return 0
	with_lock
	[[ -e $STATE ]] || return 0
	state_dir_is_ours || die "$STATE was not created by services.sh (no $MARKER); not touching it"
	extra_each stop
	ferret_stop
	pg_stop
	for port in "${REDIS_PORTS[@]}"; do
		redis_stop "$port"
	done
	rm -rf -- "$STATE"
	# $LOCKFILE is left in place on purpose: unlinking a lock file that a
	# concurrent `up` may be waiting on would break the mutual exclusion.
	log "all services down; removed $STATE"
}

# cmd_restart_postgres: restart only our postgres, by its postmaster.pid,
# as the OS user that owns its data dir (see pg_stop and pg_start).
cmd_restart_postgres() {
	with_lock
	state_dir_is_ours || die "$STATE was not created by services.sh (no $MARKER); not touching it"
	pg_our_pid || die "our postgres is not running; start it with: scripts/services.sh up"
	ensure_pg_binaries
	pg_stop
	pg_start
	pg_wait
	log "postgres $HOST:$PG_PORT restarted"
}

# cmd_start_redis: start the redis-servers of ours that are down (the
# state dir must exist: `up` made it), and nothing else.
cmd_start_redis() {
	local port
	with_lock
	[[ -e $MARKER ]] || die "no services are up (no $MARKER); start them with: scripts/services.sh up"
	ensure_redis_binaries
	for port in "${REDIS_PORTS[@]}"; do
		redis_our_pid "$port" || ! port_open "$port" ||
			port_conflict "$port" "no live pidfile in $STATE/redis-$port"
	done
	for port in "${REDIS_PORTS[@]}"; do
		redis_start "$port"
	done
	for port in "${REDIS_PORTS[@]}"; do
		redis_wait "$port"
		[[ -z ${REDIS_LOG_OFFSET[$port]} ]] || log "redis $HOST:$port started (pid $OUR_PID)"
	done
}

# cmd_start_ferretdb: start our FerretDB if it is down (the state dir must
# exist: `up` made it), and nothing else.
cmd_start_ferretdb() {
	ferret_build
	with_lock
	[[ -e $MARKER ]] || die "no services are up (no $MARKER); start them with: scripts/services.sh up"
	ferret_our_pid || ! port_open "$MONGO_PORT" ||
		port_conflict "$MONGO_PORT" "no live pidfile in $FERRET_DIR"
	ferret_start
	ferret_wait
}

# cmd_start_nats: start the NATS nodes of ours that are down (the state
# dir must exist: `up` made it), and nothing else.
cmd_start_nats() {
	nats_prepare # before the lock: a cold build takes minutes
	with_lock
	[[ -e $MARKER ]] || die "no services are up (no $MARKER); start them with: scripts/services.sh up"
	nats_preflight
	nats_start
	nats_wait
}

# cmd_start_extra NAME: start the extra service NAME (a file in services.d)
# if it is down (the state dir must exist: `up` made it), and nothing else.
cmd_start_extra() {
	local s=$1
	declare -F "${s}_prepare" >/dev/null && "${s}_prepare"
	with_lock
	[[ -e $MARKER ]] || die "no services are up (no $MARKER); start them with: scripts/services.sh up"
	! declare -F "${s}_preflight" >/dev/null || "${s}_preflight" || exit 1
	"${s}_start" || exit 1
	"${s}_wait" || exit 1
}

# cmd_faults: write the files of faults/ again (see faults_write), for
# servers that an older services.sh started. Starts nothing.
cmd_faults() {
	[[ -e $MARKER ]] || die "no services are up (no $MARKER); start them with: scripts/services.sh up"
	faults_write
	log "wrote $STATE/faults"
}

cmd_env() {
	printf 'export DISTLOCK_SERVICES_DIR=%s\n' "$(shell_quote "$STATE")"
	printf 'export DISTLOCK_REDIS_ADDRS=%s\n' "$(shell_quote "$REDIS_ADDRS")"
	printf 'export DISTLOCK_POSTGRES_DSN=%s\n' "$(shell_quote "$PG_DSN")"
	printf 'export DISTLOCK_MONGODB_URI=%s\n' "$(shell_quote "$MONGO_URI")"
	extra_each env
}

# cmd_logs: the last lines of the consensus clusters' logs (ZooKeeper,
# etcd, NATS), whose recovery after a fault depends on timing: make test
# prints them when a test failed, before `down` removes them.
cmd_logs() {
	local f n=${DISTLOCK_LOG_LINES:-25}
	[[ -d $STATE ]] || return 0
	while IFS= read -r f; do
		printf '\n==> %s (its last %s lines of roles, elections, warnings and errors) <==\n' "${f#"$STATE"/}" "$n"
		grep -E 'LOOKING|LEADING|FOLLOWING|TOOK|ERROR|WARN|FATAL|\[(WRN|ERR|FTL)\]|"level":"(warn|error|fatal)"' "$f" | grep -vE 'Notification:|from old client' | tail -n "$n" | cut -c1-300
	done < <(find "$STATE" -maxdepth 3 \( -path "$STATE/zookeeper/*" -o -path "$STATE/etcd*" -o -path "$STATE/nats/*" \) -name '*.log' | sort)
}

cmd_status() {
	local port all_up=1 state
	for port in "${REDIS_PORTS[@]}"; do
		if redis_our_pid "$port"; then
			if redis_ping "$port"; then
				state="up (pid $OUR_PID)"
			else
				state="NOT ANSWERING (pid $OUR_PID alive)"
				all_up=0
			fi
		elif port_open "$port"; then
			state="down (port taken by a process that is not ours)"
			all_up=0
		else
			state="down"
			all_up=0
		fi
		printf '%-10s %-16s %s\n' "redis" "$HOST:$port" "$state"
	done
	if pg_our_pid; then
		if find_pg_bindir && pg_ready; then
			state="up (pid $OUR_PID)"
		else
			state="NOT ANSWERING (pid $OUR_PID alive)"
			all_up=0
		fi
	elif port_open "$PG_PORT"; then
		state="down (port taken by a process that is not ours)"
		all_up=0
	else
		state="down"
		all_up=0
	fi
	printf '%-10s %-16s %s\n' "postgres" "$HOST:$PG_PORT" "$state"
	if ferret_our_pid; then
		if port_open "$MONGO_PORT"; then
			state="up (pid $OUR_PID)"
		else
			state="NOT ANSWERING (pid $OUR_PID alive)"
			all_up=0
		fi
	elif port_open "$MONGO_PORT"; then
		state="down (port taken by a process that is not ours)"
		all_up=0
	else
		state="down"
		all_up=0
	fi
	printf '%-10s %-16s %s\n' "ferretdb" "$HOST:$MONGO_PORT" "$state"
	extra_each status || all_up=0
	((all_up))
}

main() {
	local cmd=${1:-}
	case $cmd in
	up)
		[[ $# -le 2 ]] || { usage >&2; exit 2; }
		case ${2:-} in
		"") ;;
		fast) SELECTED=$GROUP_FAST ;;
		slow) SELECTED=$GROUP_SLOW ;;
		*)
			log "unknown group: $2 (want fast or slow)"
			usage >&2
			exit 2
			;;
		esac
		cmd_up
		return
		;;
	esac
	if [[ $# -ne 1 ]]; then
		usage >&2
		exit 2
	fi
	case $cmd in
	build) cmd_build ;;
	down) cmd_down ;;
	env) cmd_env ;;
	status) cmd_status ;;
	restart-postgres) cmd_restart_postgres ;;
	start-redis) cmd_start_redis ;;
	start-ferretdb) cmd_start_ferretdb ;;
	start-nats) cmd_start_nats ;;
	logs) cmd_logs ;;
	start-valkey) cmd_start_extra valkey ;;
	faults) cmd_faults ;;
	-h | --help | help) usage ;;
	*)
		log "unknown command: $1"
		usage >&2
		exit 2
		;;
	esac
}

main "$@"
