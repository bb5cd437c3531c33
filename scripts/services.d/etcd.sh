# scripts/services.d/etcd.sh - a three-member etcd cluster for drivers/etcd,
# sourced by scripts/services.sh (see the comment above extra_each there).
#
#   members  etcd-1..3: clients on 127.0.0.1:23791-23793, peers on
#            127.0.0.1:23801-23803 (never 2379/2380, a system etcd's)
#   state    $STATE/etcd-N/{run.sh,etcd.pid,etcd.log,data/}, one dir per
#            member, which is its cwd
#   env      DISTLOCK_ETCD_ENDPOINTS=http://127.0.0.1:23791,... (client URLs)
#   knobs    DISTLOCK_ETCD_BIN (see below), DISTLOCK_ETCD_CACHE (where the
#            built binary is kept; default ${XDG_CACHE_HOME:-$HOME/.cache}/distlock)
#
# The server is etcd v3.6.17, built from the Go module proxy (scripts/etcdserver,
# a main package that calls go.etcd.io/etcd/server/v3/etcdmain) once into the
# cache dir, like the FerretDB runner, and reused while its sources are
# unchanged: it is newer than Debian's etcd-server (3.4.23) and of the
# client's own release line. A cold build takes a minute or two (services.sh
# has the figures); it runs in etcd_prepare, before services.sh takes its
# lock. DISTLOCK_ETCD_BIN uses another etcd binary instead (a system
# /usr/bin/etcd, say); it is then told apart from other etcd processes by
# its cwd, as ours always is.
#
# run.sh starts its member (detached, with `setsid -f bash run.sh`) and writes
# the member's PID to etcd.pid: `up` restarts dead members with it, and the
# driver's fault tests kill (SIGKILL), hang (SIGSTOP) and restart members
# through the same files. Only PIDs recorded there, running our binary in our
# dir, are ever signalled. Members keep their data across restarts (a killed
# member rejoins the cluster), with fsync off (--unsafe-no-fsync: a killed
# process loses nothing; only a machine crash would), heartbeats every 100ms
# and elections after 1s (etcd's defaults).
#
# A fourth etcd, etcd-auth, serves the driver's credential tests: a
# one-member cluster with authentication on, from the same binary, a
# service of its own (etcdauth) at the end of this file:
#   member   client 127.0.0.1:23794, peer 127.0.0.1:23804
#   state    $STATE/etcd-auth/{run.sh,etcd.pid,etcd.log,data/}, its cwd
#   users    root (role root: everything) and nobody (no role: every key
#            request is denied), both with the test-only password below
#   env      DISTLOCK_ETCD_AUTH_DSN=etcd://root:<password>@127.0.0.1:23794
# It starts afresh each time (its data dir removed), and etcdauth_wait adds
# the users and turns authentication on through the member's JSON gateway.

EXTRA_SERVICES+=(etcd etcdauth)

readonly ETCD_VERSION=v3.6.17 # as scripts/etcdserver/go.mod requires
readonly ETCD_BUILT_COMM=distlock-etcd # the built binary's name, as /proc/PID/comm shows it
ETCD_BIN=""
ETCD_COMM=""

readonly ETCD_SRC=$(cd "${BASH_SOURCE[0]%/*}/.." && pwd)/etcdserver

# etcd_prepare: sets ETCD_BIN, building it into the cache unless a binary
# built from the same sources and flags is there already. Concurrent builds
# each write a file of their own and rename it into place.
etcd_prepare() {
	local cache hash tmp
	etcd34_fetch
	if [[ -n ${DISTLOCK_ETCD_BIN:-} ]]; then
		[[ -x $DISTLOCK_ETCD_BIN ]] || die "DISTLOCK_ETCD_BIN=$DISTLOCK_ETCD_BIN is not an executable"
		ETCD_BIN=$DISTLOCK_ETCD_BIN
		ETCD_COMM=$(basename "$ETCD_BIN")
		ETCD_COMM=${ETCD_COMM:0:15}
		return 0
	fi
	ETCD_COMM=$ETCD_BUILT_COMM
	[[ -f $ETCD_SRC/go.mod && -f $ETCD_SRC/go.sum && -f $ETCD_SRC/main.go ]] ||
		die "etcd's main not found in $ETCD_SRC"
	cache=${DISTLOCK_ETCD_CACHE:-${XDG_CACHE_HOME:-${HOME:-${STATE%/*}}/.cache}/distlock}
	hash=$({ cat "$ETCD_SRC/go.mod" "$ETCD_SRC/go.sum" "$ETCD_SRC"/*.go; echo "${GO_SERVER_FLAGS[*]}"; } | sha256sum)
	hash=${hash:0:16}
	ETCD_BIN=$cache/etcd-$ETCD_VERSION-$hash/$ETCD_BUILT_COMM
	[[ -x $ETCD_BIN ]] && return 0
	mkdir -p "${ETCD_BIN%/*}"
	tmp=$ETCD_BIN.tmp.$$
	if ! go_build "etcd $ETCD_VERSION" etcd "$ETCD_SRC" "$tmp" "${GO_SERVER_FLAGS[@]}"; then
		rm -f "$tmp"
		die "could not build etcd $ETCD_VERSION in $ETCD_SRC (or set DISTLOCK_ETCD_BIN)"
	fi
	mv -f "$tmp" "$ETCD_BIN"
}

# etcd34_fetch: fetches Debian's etcd-server (3.4.23 in bookworm) with
# `apt-get download` and unpacks it with `dpkg-deb -x` into the cache, as
# etcd-debian-VERSION/usr/bin/etcd, once; never installed, never started
# here. drivers/etcd's settings test runs a cluster of its own of it, the
# only etcd older than 3.5.11 this machine can run (the etcd-version rule).
# A failure is logged and skipped: that test then skips.
etcd34_fetch() {
	local cache dir deb version
	cache=${DISTLOCK_ETCD_CACHE:-${XDG_CACHE_HOME:-${HOME:-${STATE%/*}}/.cache}/distlock}
	compgen -G "$cache/etcd-debian-*/usr/bin/etcd" >/dev/null && return 0
	if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
		log "etcd 3.4 not fetched: needs apt-get and dpkg-deb (drivers/etcd's etcd-version test will skip)"
		return 0
	fi
	mkdir -p "$cache"
	dir=$(mktemp -d "$cache/etcd-debian-fetch.XXXXXX")
	log "fetching Debian's etcd-server (apt-get download, once) ..."
	if ! (cd "$dir" && apt-get -q -o APT::Sandbox::User=root download etcd-server 9>&-) >&2; then
		rm -rf "$dir"
		log "etcd 3.4 not fetched: apt-get download etcd-server failed (drivers/etcd's etcd-version test will skip)"
		return 0
	fi
	deb=$(compgen -G "$dir/etcd-server_*.deb" | head -n1)
	version=${deb##*/etcd-server_}
	version=${version%%[-+_]*}
	if [[ -z $version ]] || ! dpkg-deb -x "$deb" "$dir/root" || ! "$dir/root/usr/bin/etcd" --version >/dev/null 2>&1; then
		rm -rf "$dir"
		log "etcd 3.4 not fetched: $deb did not unpack into a working etcd"
		return 0
	fi
	mv -T "$dir/root" "$cache/etcd-debian-$version" 2>/dev/null || true
	rm -rf "$dir"
	log "unpacked Debian's etcd $version into $cache/etcd-debian-$version"
}

# etcd_dir N: the state dir of member N (1-3).
etcd_dir() { printf '%s/etcd-%s' "$STATE" "$1"; }

# etcd_our_pid N: true (and OUR_PID set) if member N's pidfile names a live
# process of our binary whose cwd is the member's dir.
etcd_our_pid() {
	local dir
	dir=$(etcd_dir "$1")
	OUR_PID=""
	read_pid "$dir/etcd.pid"
	[[ -n $PID_READ && -n $ETCD_COMM ]] && pid_is_ours "$PID_READ" "$ETCD_COMM" "$dir" || return 1
	OUR_PID=$PID_READ
}

# etcd_comm: sets ETCD_COMM for commands that did not prepare (down, status).
etcd_comm() {
	[[ -n $ETCD_COMM ]] && return 0
	if [[ -n ${DISTLOCK_ETCD_BIN:-} ]]; then
		ETCD_COMM=$(basename "$DISTLOCK_ETCD_BIN")
		ETCD_COMM=${ETCD_COMM:0:15}
	else
		ETCD_COMM=$ETCD_BUILT_COMM
	fi
}

etcd_preflight() {
	local i port
	for i in 1 2 3; do
		etcd_our_pid "$i" && continue
		for port in "${ETCD_CLIENT_PORTS[$((i - 1))]}" "${ETCD_PEER_PORTS[$((i - 1))]}"; do
			port_open "$port" && port_conflict "$port" "no live pidfile in $(etcd_dir "$i")"
		done
	done
	return 0
}

# etcd_write_launcher N: writes member N's run.sh.
etcd_write_launcher() {
	local i=$1 dir cluster="" j
	dir=$(etcd_dir "$i")
	for j in 1 2 3; do
		cluster+="${cluster:+,}etcd-$j=http://$HOST:${ETCD_PEER_PORTS[$((j - 1))]}"
	done
	mkdir -p "$dir"
	cat >"$dir/run.sh.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/services.d/etcd.sh: starts member etcd-$i of the test
# cluster in this dir, recording its PID in etcd.pid. Run: setsid -f bash run.sh
cd "\${BASH_SOURCE[0]%/*}" || exit 1
echo \$\$ >etcd.pid.tmp && mv -f etcd.pid.tmp etcd.pid
exec '$ETCD_BIN' --name etcd-$i --data-dir data \\
	--listen-client-urls http://$HOST:${ETCD_CLIENT_PORTS[$((i - 1))]} \\
	--advertise-client-urls http://$HOST:${ETCD_CLIENT_PORTS[$((i - 1))]} \\
	--listen-peer-urls http://$HOST:${ETCD_PEER_PORTS[$((i - 1))]} \\
	--initial-advertise-peer-urls http://$HOST:${ETCD_PEER_PORTS[$((i - 1))]} \\
	--initial-cluster $cluster \\
	--initial-cluster-token distlock-test --initial-cluster-state new \\
	--heartbeat-interval 100 --election-timeout 1000 \\
	--unsafe-no-fsync --log-level warn \\
	</dev/null >>etcd.log 2>&1
EOF
	mv -f "$dir/run.sh.tmp" "$dir/run.sh"
}

# etcd_start: starts every member that is not running.
etcd_start() {
	local i dir
	for i in 1 2 3; do
		etcd_our_pid "$i" && continue
		dir=$(etcd_dir "$i")
		rm -f "$dir/etcd.pid"
		etcd_write_launcher "$i"
		setsid -f bash "$dir/run.sh" 9>&- </dev/null >/dev/null 2>&1
	done
}

# etcd_healthy PORT: the member on PORT reports the cluster healthy (it
# has a leader and answers a linearizable read).
# (HTTP over bash's /dev/tcp: no fork, no curl needed.)
etcd_healthy() {
	local fd line body=""
	{ exec {fd}<>"/dev/tcp/$HOST/$1"; } 2>/dev/null || return 1
	trap '' PIPE
	{ printf 'GET /health HTTP/1.0\r\nHost: %s\r\n\r\n' "$HOST:$1" >&"$fd"; } 2>/dev/null || true
	while IFS= read -r -t 2 line <&"$fd" || [[ -n $line ]]; do
		body+=$line
		line=""
	done
	trap - PIPE
	exec {fd}>&-
	[[ $body == *'"health":"true"'* ]]
}

etcd_wait() {
	local i deadline=$((SECONDS + TIMEOUT)) pids=()
	for i in 1 2 3; do
		while ! { etcd_our_pid "$i" && etcd_healthy "${ETCD_CLIENT_PORTS[$((i - 1))]}"; }; do
			if ((SECONDS >= deadline)); then
				print_log_tail "$(etcd_dir "$i")/etcd.log"
				log "etcd member $i on $HOST:${ETCD_CLIENT_PORTS[$((i - 1))]} did not come up healthy within ${TIMEOUT}s"
				return 1
			fi
			sleep 0.1
		done
		pids+=("$OUR_PID")
	done
	log "etcd $HOST:${ETCD_CLIENT_PORTS[0]}-${ETCD_CLIENT_PORTS[2]} up (pids ${pids[*]}, $ETCD_BIN)"
}

etcd_stop() {
	local i pid dir
	etcd_comm
	for i in 1 2 3; do
		dir=$(etcd_dir "$i")
		[[ -d $dir ]] || continue
		if etcd_our_pid "$i"; then
			pid=$OUR_PID
			stop_pid "etcd member $i" "$pid" || return 1
			log "etcd member $i $HOST:${ETCD_CLIENT_PORTS[$((i - 1))]} stopped (pid $pid)"
		fi
		rm -f "$dir/etcd.pid"
	done
}

etcd_env() {
	local i eps=""
	for i in 0 1 2; do
		eps+="${eps:+,}http://$HOST:${ETCD_CLIENT_PORTS[$i]}"
	done
	printf 'export DISTLOCK_ETCD_ENDPOINTS=%s\n' "$(shell_quote "$eps")"
}

etcd_status() {
	local i port state ok=0
	etcd_comm
	for i in 1 2 3; do
		port=${ETCD_CLIENT_PORTS[$((i - 1))]}
		if etcd_our_pid "$i"; then
			if etcd_healthy "$port"; then
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
		printf '%-10s %-16s %s\n' "etcd-$i" "$HOST:$port" "$state"
	done
	return $ok
}

# ------------------------------------------------------------ etcd-auth --

readonly ETCDAUTH_DIR=$STATE/etcd-auth
readonly ETCDAUTH_PASSWORD=distlock-etcd-test-password
ETCDAUTH_STARTED=""

# etcdauth_our_pid: true (and OUR_PID set) if the pidfile names a live
# process of our binary whose cwd is the member's dir.
etcdauth_our_pid() {
	OUR_PID=""
	etcd_comm
	read_pid "$ETCDAUTH_DIR/etcd.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" "$ETCD_COMM" "$ETCDAUTH_DIR" || return 1
	OUR_PID=$PID_READ
}

etcdauth_preflight() {
	local port
	etcdauth_our_pid && return 0
	for port in "$ETCDAUTH_CLIENT_PORT" "$ETCDAUTH_PEER_PORT"; do
		port_open "$port" && port_conflict "$port" "no live pidfile in $ETCDAUTH_DIR"
	done
	return 0
}

# etcdauth_start: starts the member, with an empty data dir, unless it runs.
etcdauth_start() {
	local url=http://$HOST:$ETCDAUTH_CLIENT_PORT peer=http://$HOST:$ETCDAUTH_PEER_PORT
	ETCDAUTH_STARTED=""
	etcdauth_our_pid && return 0
	mkdir -p "$ETCDAUTH_DIR"
	rm -rf "$ETCDAUTH_DIR/data" "$ETCDAUTH_DIR/etcd.pid"
	cat >"$ETCDAUTH_DIR/run.sh.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/services.d/etcd.sh: starts etcd-auth, the one-member
# cluster with authentication, in this dir, recording its PID in etcd.pid.
cd "\${BASH_SOURCE[0]%/*}" || exit 1
echo \$\$ >etcd.pid.tmp && mv -f etcd.pid.tmp etcd.pid
exec '$ETCD_BIN' --name etcd-auth --data-dir data \\
	--listen-client-urls $url --advertise-client-urls $url \\
	--listen-peer-urls $peer --initial-advertise-peer-urls $peer \\
	--initial-cluster etcd-auth=$peer \\
	--initial-cluster-token distlock-test-auth --initial-cluster-state new \\
	--unsafe-no-fsync --log-level warn \\
	</dev/null >>etcd.log 2>&1
EOF
	mv -f "$ETCDAUTH_DIR/run.sh.tmp" "$ETCDAUTH_DIR/run.sh"
	setsid -f bash "$ETCDAUTH_DIR/run.sh" 9>&- </dev/null >/dev/null 2>&1
	ETCDAUTH_STARTED=1
}

# etcd_post PORT PATH JSON: POSTs JSON to the gateway of the member on
# PORT and sets ETCD_REPLY to the response; true if its status is 200.
ETCD_REPLY=""
etcd_post() {
	local fd line status="" reply=""
	{ exec {fd}<>"/dev/tcp/$HOST/$1"; } 2>/dev/null || return 1
	trap '' PIPE
	{ printf 'POST %s HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
		"$2" "$HOST:$1" "${#3}" "$3" >&"$fd"; } 2>/dev/null || true
	while IFS= read -r -t 2 line <&"$fd" || [[ -n $line ]]; do
		[[ -n $status ]] || status=$line
		reply+=$line
		line=""
	done
	trap - PIPE
	exec {fd}>&-
	ETCD_REPLY=$reply
	[[ $status == "HTTP/1."?" 200"* ]]
}

# etcdauth_enforced: the member refuses a request without credentials.
etcdauth_enforced() {
	etcd_post "$ETCDAUTH_CLIENT_PORT" /v3/kv/range '{"key":"eA=="}'
	[[ $ETCD_REPLY == *'user name is empty'* ]]
}

# etcdauth_setup: adds the users and turns authentication on. A step that
# an earlier run, cut short, did already fails and is passed over.
etcdauth_setup() {
	local port=$ETCDAUTH_CLIENT_PORT user
	etcd_post "$port" /v3/auth/role/add '{"name":"root"}' || true
	for user in root nobody; do
		etcd_post "$port" /v3/auth/user/add "{\"name\":\"$user\",\"password\":\"$ETCDAUTH_PASSWORD\"}" || true
	done
	etcd_post "$port" /v3/auth/user/grant '{"user":"root","role":"root"}' || true
	etcd_post "$port" /v3/auth/enable '{}' || true
	etcdauth_enforced
}

# etcdauth_wait: waits until the member is healthy and has authentication
# on, turning it on if need be.
etcdauth_wait() {
	local deadline=$((SECONDS + TIMEOUT))
	while ! { etcdauth_our_pid && etcd_healthy "$ETCDAUTH_CLIENT_PORT"; }; do
		if ((SECONDS >= deadline)); then
			print_log_tail "$ETCDAUTH_DIR/etcd.log"
			log "etcd-auth on $HOST:$ETCDAUTH_CLIENT_PORT did not come up healthy within ${TIMEOUT}s"
			return 1
		fi
		sleep 0.1
	done
	if ! etcdauth_enforced && ! etcdauth_setup; then
		log "etcd-auth on $HOST:$ETCDAUTH_CLIENT_PORT: could not turn authentication on: $ETCD_REPLY"
		return 1
	fi
	[[ -z $ETCDAUTH_STARTED ]] || log "etcd-auth $HOST:$ETCDAUTH_CLIENT_PORT up with authentication (pid $OUR_PID)"
}

etcdauth_stop() {
	local pid
	[[ -d $ETCDAUTH_DIR ]] || return 0
	if etcdauth_our_pid; then
		pid=$OUR_PID
		stop_pid "etcd-auth" "$pid" || return 1
		log "etcd-auth $HOST:$ETCDAUTH_CLIENT_PORT stopped (pid $pid)"
	fi
	rm -f "$ETCDAUTH_DIR/etcd.pid"
}

etcdauth_env() {
	printf 'export DISTLOCK_ETCD_AUTH_DSN=%s\n' \
		"$(shell_quote "etcd://root:$ETCDAUTH_PASSWORD@$HOST:$ETCDAUTH_CLIENT_PORT")"
}

etcdauth_status() {
	local state ok=0
	if etcdauth_our_pid; then
		if etcd_healthy "$ETCDAUTH_CLIENT_PORT" && etcdauth_enforced; then
			state="up (pid $OUR_PID, authentication on)"
		else
			state="NOT HEALTHY, OR NO AUTHENTICATION (pid $OUR_PID alive)"
			ok=1
		fi
	elif port_open "$ETCDAUTH_CLIENT_PORT"; then
		state="down (port taken by a process that is not ours)"
		ok=1
	else
		state="down"
		ok=1
	fi
	printf '%-10s %-16s %s\n' "etcd-auth" "$HOST:$ETCDAUTH_CLIENT_PORT" "$state"
	return $ok
}

# etcd_faults: the etcd driver's file in faults/ (see faults_write in
# services.sh), with a launcher, start, in each member's dir, which starts
# run.sh detached.
etcd_faults() {
	local i dir
	faults_begin etcd "etcd with --unsafe-no-fsync"
	for i in 1 2 3; do
		dir=$(etcd_dir "$i")
		[[ -f $dir/run.sh ]] || continue
		printf '#!/usr/bin/env bash\n# Written by scripts/services.d/etcd.sh: starts member etcd-%s, detached.\nexec setsid -f bash %q </dev/null >/dev/null 2>&1\n' \
			"$i" "$dir/run.sh" >"$dir/start.tmp"
		chmod +x "$dir/start.tmp"
		mv -f "$dir/start.tmp" "$dir/start"
		faults_server "etcd-$i" "$HOST:${ETCD_CLIENT_PORTS[$((i - 1))]}" "$dir/etcd.pid" "$dir" "$dir/start" \
			"http://$HOST:${ETCD_CLIENT_PORTS[$((i - 1))]}"
	done
	faults_end
}
