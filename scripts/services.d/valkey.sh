# scripts/services.d/valkey.sh - five independent Valkey masters, the Redis
# drivers' second server, sourced by scripts/services.sh (see the comment
# above extra_each there).
#
#   servers  127.0.0.1:7201-7205 (VALKEY_PORTS in services.sh), no
#            persistence, no password
#   state    $STATE/valkey-720N/{valkey.pid,valkey.log,launch.log}, one dir
#            per server, which is its cwd
#   env      DISTLOCK_VALKEY_ADDRS=127.0.0.1:7201,...,127.0.0.1:7205
#   knobs    DISTLOCK_VALKEY_BIN (a valkey-server to use instead),
#            DISTLOCK_VALKEY_CACHE (where the unpacked packages are kept;
#            default ${XDG_CACHE_HOME:-$HOME/.cache}/distlock)
#
# Debian bookworm has no Valkey; bookworm-backports has Valkey 8. The
# machine's apt sources do not list backports, and `apt-get install` would
# start the package's service on 6379, the system Redis's port. So
# valkey_prepare fetches the packages with `apt-get download`, through a
# sources file and a lists folder of its own (the machine's apt setup is
# not touched), from the mirror the machine's sources name for bookworm,
# and unpacks them with `dpkg-deb -x` into the cache, once. As with Redis,
# the server binary ships in valkey-tools; the libraries it links are
# Redis's, already on the machine. A server is ours if its pidfile names a
# live valkey-server whose cwd is its dir; nothing is stopped by name.

EXTRA_SERVICES+=(valkey)

readonly VALKEY_SUITE=bookworm-backports
readonly VALKEY_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
VALKEY_BIN=""

# valkey_cache: the folder the unpacked packages are kept in.
valkey_cache() {
	printf '%s/valkey-%s' "${DISTLOCK_VALKEY_CACHE:-${XDG_CACHE_HOME:-${HOME:-${STATE%/*}}/.cache}/distlock}" "$VALKEY_SUITE"
}

# valkey_bin: sets VALKEY_BIN without fetching anything.
valkey_bin() {
	if [[ -n ${DISTLOCK_VALKEY_BIN:-} ]]; then
		VALKEY_BIN=$DISTLOCK_VALKEY_BIN
	else
		VALKEY_BIN=$(valkey_cache)/usr/bin/valkey-server
	fi
}

# valkey_mirror: prints the URI of the Debian archive that the machine's
# apt sources use for its release (bookworm), one-line or deb822 style.
valkey_mirror() {
	local codename="" f uri=""
	codename=$(. /etc/os-release 2>/dev/null && printf '%s' "${VERSION_CODENAME:-}")
	[[ -n $codename ]] || codename=bookworm
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f && -z $uri ]] || continue
		uri=$(awk -v suite="$codename" '
			function flush() { if (deb && ok && uri != "") { print uri; found = 1; exit } deb = ok = 0; uri = "" }
			/^[ \t]*$/ { flush(); next }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
			END { if (!found) flush() }' "$f")
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -r $f && -z $uri ]] || continue
		uri=$(awk -v suite="$codename" '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) == suite) { print $i; exit } }' "$f")
	done
	[[ -n $uri ]] && printf '%s\n' "$uri"
}

# valkey_prepare: sets VALKEY_BIN, fetching and unpacking Valkey into the
# cache unless it is there. Concurrent runs each work in a folder of their
# own and rename it into place.
valkey_prepare() {
	local cache uri dir deb version
	valkey_bin
	if [[ -n ${DISTLOCK_VALKEY_BIN:-} ]]; then
		[[ -x $VALKEY_BIN ]] || die "DISTLOCK_VALKEY_BIN=$VALKEY_BIN is not an executable"
		return 0
	fi
	[[ -x $VALKEY_BIN ]] && return 0
	command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 ||
		die "fetching Valkey needs apt-get and dpkg-deb; or set DISTLOCK_VALKEY_BIN"
	uri=$(valkey_mirror) || die "no Debian mirror for this release in the apt sources; set DISTLOCK_VALKEY_BIN"
	cache=$(valkey_cache)
	mkdir -p "${cache%/*}"
	dir=$(mktemp -d "${cache%/*}/valkey-fetch.XXXXXX")
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/parts" "$dir/debs" "$dir/root"
	printf 'deb [signed-by=%s] %s %s main\n' "$VALKEY_KEYRING" "$uri" "$VALKEY_SUITE" >"$dir/sources.list"
	local apt=(apt-get -q -o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=$dir/parts"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root)
	log "fetching Valkey from $VALKEY_SUITE (apt-get download, once) ..."
	if ! "${apt[@]}" update 9>&- >&2 ||
		! (cd "$dir/debs" && "${apt[@]}" download "valkey-server/$VALKEY_SUITE" "valkey-tools/$VALKEY_SUITE" 9>&-) >&2; then
		rm -rf "$dir"
		die "could not fetch valkey-server and valkey-tools from $VALKEY_SUITE"
	fi
	for deb in "$dir"/debs/*.deb; do
		dpkg-deb -x "$deb" "$dir/root" || { rm -rf "$dir"; die "dpkg-deb -x $deb failed"; }
	done
	if ! version=$("$dir/root/usr/bin/valkey-server" --version 2>&1); then
		log "$version"
		rm -rf "$dir"
		die "the unpacked valkey-server does not run (a library missing?)"
	fi
	mv -T "$dir/root" "$cache" 2>/dev/null || [[ -x $VALKEY_BIN ]] || { rm -rf "$dir"; die "could not move Valkey into $cache"; }
	rm -rf "$dir"
	log "unpacked ${version%% sha=*} into $cache"
}

# valkey_our_pid PORT: true (and OUR_PID set) if the pidfile for PORT
# names a live valkey-server running in its dir.
valkey_our_pid() {
	local dir=$STATE/valkey-$1
	OUR_PID=""
	read_pid "$dir/valkey.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" valkey-server "$dir" || return 1
	OUR_PID=$PID_READ
}

valkey_preflight() {
	local port
	for port in "${VALKEY_PORTS[@]}"; do
		valkey_our_pid "$port" || ! port_open "$port" ||
			port_conflict "$port" "no live pidfile in $STATE/valkey-$port"
	done
}

# valkey_start: starts each server that is not running, empty.
valkey_start() {
	local port dir
	valkey_bin
	for port in "${VALKEY_PORTS[@]}"; do
		valkey_our_pid "$port" && continue
		dir=$STATE/valkey-$port
		rm -f "$dir/valkey.pid"
		mkdir -p "$dir"
		if ! "$VALKEY_BIN" \
			--bind "$HOST" --port "$port" \
			--save "" --appendonly no \
			--daemonize yes \
			--pidfile "$dir/valkey.pid" \
			--logfile "$dir/valkey.log" \
			--dir "$dir" 9>&- </dev/null >"$dir/launch.log" 2>&1; then
			print_log_tail "$dir/launch.log"
			log "valkey-server on port $port failed to start"
			return 1
		fi
	done
}

valkey_wait() {
	local port deadline=$((SECONDS + TIMEOUT)) pids=()
	for port in "${VALKEY_PORTS[@]}"; do
		while ! { valkey_our_pid "$port" && redis_ping "$port"; }; do
			if ((SECONDS >= deadline)); then
				print_log_tail "$STATE/valkey-$port/valkey.log"
				log "valkey on $HOST:$port did not come up within ${TIMEOUT}s"
				return 1
			fi
			sleep 0.05
		done
		pids+=("$OUR_PID")
	done
	log "valkey $HOST:${VALKEY_PORTS[0]}-${VALKEY_PORTS[-1]} up (pids ${pids[*]}, $VALKEY_BIN)"
}

valkey_stop() {
	local port dir pid
	for port in "${VALKEY_PORTS[@]}"; do
		dir=$STATE/valkey-$port
		[[ -d $dir ]] || continue
		if valkey_our_pid "$port"; then
			pid=$OUR_PID
			stop_pid "valkey $port" "$pid" || return 1
			log "valkey $HOST:$port stopped (pid $pid)"
		fi
		rm -f "$dir/valkey.pid"
	done
}

valkey_env() {
	local port addrs=""
	for port in "${VALKEY_PORTS[@]}"; do
		addrs+="${addrs:+,}$HOST:$port"
	done
	printf 'export DISTLOCK_VALKEY_ADDRS=%s\n' "$(shell_quote "$addrs")"
}

valkey_status() {
	local port state ok=0
	for port in "${VALKEY_PORTS[@]}"; do
		if valkey_our_pid "$port"; then
			if redis_ping "$port"; then
				state="up (pid $OUR_PID)"
			else
				state="NOT ANSWERING (pid $OUR_PID alive)"
				ok=1
			fi
		elif port_open "$port"; then
			state="down (port taken by a process that is not ours)"
			ok=1
		else
			state="down"
			ok=1
		fi
		printf '%-10s %-16s %s\n' "valkey" "$HOST:$port" "$state"
	done
	return $ok
}
