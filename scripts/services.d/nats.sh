# scripts/services.d/nats.sh - a three-node NATS JetStream cluster for
# drivers/nats, sourced by scripts/services.sh (see the comment above
# extra_each there).
#
#   nodes    nats-1..3: clients on 127.0.0.1:14221-14223, routes on
#            127.0.0.1:14231-14233, monitoring on 127.0.0.1:14241-14243
#            (never 4222/6222/8222, the machine's own NATS)
#   state    $STATE/nats/nodeN/{start,nats.conf,nats.pid,nats.log,data/},
#            one dir per node, which is its cwd
#   users    distlock (everything) with the test-only password below; the
#            system account's user "sys" reads the servers' settings
#   env      DISTLOCK_NATS_DSN=nats://distlock:<password>@127.0.0.1:14221,...
#            DISTLOCK_NATS_MONITOR=http://127.0.0.1:14241 (the monitoring
#            endpoint that tells the fsync setting), and
#            DISTLOCK_NATS_MONITORS, all three nodes' (health checks)
#   knobs    DISTLOCK_NATS_BIN (another nats-server binary, 2.11 or newer;
#            with Raft's default timings the driver's fault tests need
#            longer timeouts than theirs),
#            DISTLOCK_NATS_CACHE (where the built binary is kept; default
#            ${XDG_CACHE_HOME:-$HOME/.cache}/distlock)
#
# The server is nats-server v2.15.3, built once into the cache dir (like
# etcd's) from scripts/natsserver: nats-server's main with shorter Raft
# timings (heartbeats every 100ms, elections after 0.5-1s instead of
# 4-9s; nats-server has no setting for them), so that the driver's fault
# tests wait for seconds, not tens of seconds. It is rebuilt when those
# sources change. Debian's nats-server (2.9) has no per-key TTLs. A cold
# build takes a minute or two (services.sh has the figures); it runs in
# nats_prepare, before services.sh takes its lock. The binary is named distlock-nats, so
# /proc/PID/comm tells it from the system's nats-server; a node is ours
# only if its pidfile names a live distlock-nats whose cwd is the node's
# dir.
#
# Each node's `start` launches it detached (setsid) and writes its PID to
# nats.pid: `start-nats` and `up` restart dead nodes with it, and the
# driver's fault tests kill (SIGKILL), hang (SIGSTOP) and restart nodes
# through the same files. Nodes keep their data across restarts. JetStream
# runs with sync_interval: always (an fsync after every write): Jepsen found
# (NATS 2.12.1, December 2025) that the default, an fsync every two minutes,
# loses acknowledged writes when nodes crash together, and a lock that
# forgets a grant lets a second holder in.

EXTRA_SERVICES+=(nats)

readonly NATS_BUILT_COMM=distlock-nats
readonly NATS_USER=distlock
readonly NATS_PASSWORD=distlock-nats-test-password
readonly NATS_SYS_PASSWORD=distlock-nats-sys-test-password
readonly NATS_DIR=$STATE/nats
NATS_BIN=""
NATS_COMM=""

readonly NATS_SRC=$(cd "${BASH_SOURCE[0]%/*}/.." && pwd)/natsserver

nats_comm() {
	[[ -n $NATS_COMM ]] && return 0
	if [[ -n ${DISTLOCK_NATS_BIN:-} ]]; then
		NATS_COMM=$(basename "$DISTLOCK_NATS_BIN")
		NATS_COMM=${NATS_COMM:0:15}
	else
		NATS_COMM=$NATS_BUILT_COMM
	fi
}

# nats_prepare: sets NATS_BIN, building it into the cache unless a binary
# built from the same sources and flags is there already. Concurrent builds
# each write a file of their own and rename it into place.
nats_prepare() {
	local cache hash tmp
	nats_comm
	if [[ -n ${DISTLOCK_NATS_BIN:-} ]]; then
		[[ -x $DISTLOCK_NATS_BIN ]] || die "DISTLOCK_NATS_BIN=$DISTLOCK_NATS_BIN is not an executable"
		NATS_BIN=$DISTLOCK_NATS_BIN
		return 0
	fi
	[[ -f $NATS_SRC/go.mod && -f $NATS_SRC/go.sum && -f $NATS_SRC/main.go ]] ||
		die "nats-server runner sources not found in $NATS_SRC"
	cache=${DISTLOCK_NATS_CACHE:-${XDG_CACHE_HOME:-${HOME:-${STATE%/*}}/.cache}/distlock}
	hash=$({ cat "$NATS_SRC/go.mod" "$NATS_SRC/go.sum" "$NATS_SRC"/*.go; echo "${GO_SERVER_FLAGS[*]}"; } | sha256sum)
	hash=${hash:0:16}
	NATS_BIN=$cache/nats-$hash/$NATS_BUILT_COMM
	[[ -x $NATS_BIN ]] && return 0
	mkdir -p "${NATS_BIN%/*}"
	tmp=$NATS_BIN.tmp.$$
	if ! go_build "nats-server" nats "$NATS_SRC" "$tmp" "${GO_SERVER_FLAGS[@]}"; then
		rm -f "$tmp"
		die "could not build nats-server in $NATS_SRC (or set DISTLOCK_NATS_BIN)"
	fi
	mv -f "$tmp" "$NATS_BIN"
}

# nats_node_dir N: the state dir of node N (1-3).
nats_node_dir() { printf '%s/node%s' "$NATS_DIR" "$1"; }

# nats_our_pid N: true (and OUR_PID set) if node N's pidfile names a live
# process of our binary whose cwd is the node's dir.
nats_our_pid() {
	local dir
	dir=$(nats_node_dir "$1")
	nats_comm
	OUR_PID=""
	read_pid "$dir/nats.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" "$NATS_COMM" "$dir" || return 1
	OUR_PID=$PID_READ
}

nats_preflight() {
	local i port
	for i in 1 2 3; do
		nats_our_pid "$i" && continue
		for port in "${NATS_CLIENT_PORTS[$((i - 1))]}" "${NATS_CLUSTER_PORTS[$((i - 1))]}" "${NATS_MONITOR_PORTS[$((i - 1))]}"; do
			port_open "$port" && port_conflict "$port" "no live pidfile in $(nats_node_dir "$i")"
		done
	done
	return 0
}

# nats_write_node N: writes node N's nats.conf and its launcher, start.
nats_write_node() {
	local i=$1 dir routes="" j
	dir=$(nats_node_dir "$i")
	for j in 1 2 3; do
		routes+="    nats-route://$HOST:${NATS_CLUSTER_PORTS[$((j - 1))]}"$'\n'
	done
	mkdir -p "$dir/data"
	cat >"$dir/nats.conf.tmp" <<EOF
# Written by scripts/services.d/nats.sh: node nats-$i of the test cluster.
server_name: nats-$i
listen: $HOST:${NATS_CLIENT_PORTS[$((i - 1))]}
http: $HOST:${NATS_MONITOR_PORTS[$((i - 1))]}
jetstream {
  store_dir: data
  sync_interval: always
  max_memory_store: 64MB
  max_file_store: 2GB
}
cluster {
  name: distlock
  listen: $HOST:${NATS_CLUSTER_PORTS[$((i - 1))]}
  routes: [
$routes  ]
}
accounts {
  DISTLOCK { jetstream: enabled, users: [ { user: $NATS_USER, password: "$NATS_PASSWORD" } ] }
  SYS { users: [ { user: sys, password: "$NATS_SYS_PASSWORD" } ] }
}
system_account: SYS
EOF
	mv -f "$dir/nats.conf.tmp" "$dir/nats.conf"
	cat >"$dir/start.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/services.d/nats.sh: starts node nats-$i of the test
# cluster, detached, in this dir, recording its PID in nats.pid.
cd "\${BASH_SOURCE[0]%/*}" || exit 1
# A node killed a moment ago may still hold its ports: wait up to 5s.
for _ in \$(seq 100); do
	ss -Hltn '( sport = :${NATS_CLIENT_PORTS[$((i - 1))]} or sport = :${NATS_CLUSTER_PORTS[$((i - 1))]} or sport = :${NATS_MONITOR_PORTS[$((i - 1))]} )' 2>/dev/null | grep -q . || break
	sleep 0.05
done
exec setsid -f bash -c 'echo \$\$ >nats.pid.tmp && mv -f nats.pid.tmp nats.pid && exec "\$0" -c nats.conf' '$NATS_BIN' </dev/null >>nats.log 2>&1
EOF
	chmod +x "$dir/start.tmp"
	mv -f "$dir/start.tmp" "$dir/start"
}

# nats_start: starts every node that is not running.
nats_start() {
	local i dir
	for i in 1 2 3; do
		nats_our_pid "$i" && continue
		dir=$(nats_node_dir "$i")
		rm -f "$dir/nats.pid"
		nats_write_node "$i"
		"$dir/start" 9>&-
	done
}

# nats_get PORT PATH: sets NATS_REPLY to the monitoring endpoint's answer;
# true if its status is 200. (HTTP over bash's /dev/tcp: no curl needed.)
NATS_REPLY=""
nats_get() {
	local fd line status="" reply=""
	{ exec {fd}<>"/dev/tcp/$HOST/$1"; } 2>/dev/null || return 1
	trap '' PIPE
	{ printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$2" "$HOST:$1" >&"$fd"; } 2>/dev/null || true
	while IFS= read -r -t 2 line <&"$fd" || [[ -n $line ]]; do
		[[ -n $status ]] || status=$line
		reply+=$line
		line=""
	done
	trap - PIPE
	exec {fd}>&-
	NATS_REPLY=$reply
	[[ $status == "HTTP/1."?" 200"* ]]
}

# nats_healthy PORT: the node's JetStream is up and in a cluster with a
# meta leader (the health endpoint checks both).
nats_healthy() { nats_get "$1" '/healthz'; }

nats_wait() {
	local i deadline=$((SECONDS + TIMEOUT)) pids=()
	for i in 1 2 3; do
		while ! { nats_our_pid "$i" && nats_healthy "${NATS_MONITOR_PORTS[$((i - 1))]}"; }; do
			if ((SECONDS >= deadline)); then
				print_log_tail "$(nats_node_dir "$i")/nats.log"
				log "nats node $i on $HOST:${NATS_CLIENT_PORTS[$((i - 1))]} did not come up healthy within ${TIMEOUT}s"
				return 1
			fi
			sleep 0.1
		done
		pids+=("$OUR_PID")
	done
	log "nats $HOST:${NATS_CLIENT_PORTS[0]}-${NATS_CLIENT_PORTS[2]} up (pids ${pids[*]}, $NATS_BIN)"
}

nats_stop() {
	local i pid dir
	for i in 1 2 3; do
		dir=$(nats_node_dir "$i")
		[[ -d $dir ]] || continue
		if nats_our_pid "$i"; then
			pid=$OUR_PID
			stop_pid "nats node $i" "$pid" || return 1
			log "nats node $i $HOST:${NATS_CLIENT_PORTS[$((i - 1))]} stopped (pid $pid)"
		fi
		rm -f "$dir/nats.pid"
	done
}

nats_env() {
	local i hosts=""
	for i in 0 1 2; do
		hosts+="${hosts:+,}$HOST:${NATS_CLIENT_PORTS[$i]}"
	done
	printf 'export DISTLOCK_NATS_DSN=%s\n' "$(shell_quote "nats://$NATS_USER:$NATS_PASSWORD@$hosts")"
	printf 'export DISTLOCK_NATS_MONITOR=%s\n' "$(shell_quote "http://$HOST:${NATS_MONITOR_PORTS[0]}")"
	printf 'export DISTLOCK_NATS_MONITORS=%s\n' "$(shell_quote "http://$HOST:${NATS_MONITOR_PORTS[0]},http://$HOST:${NATS_MONITOR_PORTS[1]},http://$HOST:${NATS_MONITOR_PORTS[2]}")"
}

nats_status() {
	local i port state ok=0
	for i in 1 2 3; do
		port=${NATS_CLIENT_PORTS[$((i - 1))]}
		if nats_our_pid "$i"; then
			if nats_healthy "${NATS_MONITOR_PORTS[$((i - 1))]}"; then
				state="up (pid $OUR_PID)"
			else
				state="NOT HEALTHY (pid $OUR_PID alive)"
				ok=1
			fi
		elif port_open "$port"; then
			state="down (port taken by a process that is not ours)"
			ok=1
		else
			state="down"
			ok=1
		fi
		printf '%-10s %-16s %s\n' "nats-$i" "$HOST:$port" "$state"
	done
	return $ok
}

# nats_faults: the nats driver's file in faults/ (see faults_write in
# services.sh): each node's start, and its monitoring endpoint, which tells
# the leaders.
nats_faults() {
	local i dir
	faults_begin nats "NATS JetStream with sync_interval: always (an fsync after every write)"
	for i in 1 2 3; do
		dir=$(nats_node_dir "$i")
		[[ -x $dir/start ]] || continue
		faults_server "nats-$i" "$HOST:${NATS_CLIENT_PORTS[$((i - 1))]}" "$dir/nats.pid" "$dir" "$dir/start" \
			"http://$HOST:${NATS_MONITOR_PORTS[$((i - 1))]}"
	done
	faults_end
}
