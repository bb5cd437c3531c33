# scripts/services.d/zookeeper.sh - a three-member ZooKeeper ensemble for
# drivers/zookeeper, sourced by scripts/services.sh (see the comment above
# extra_each there).
#
# Members 1-3 listen on 127.0.0.1: clients 21811-21813, peers 28881-28883,
# leader election 18881-18883; the AdminServer (Jetty, 8080) is off. They run
# Debian's `zookeeper` package (3.8; apt installs it, with a JRE, when it is
# missing) straight from its jar, one JVM each with a small heap and the
# serial collector, under $STATE/zookeeper/zkN/:
#   zoo.cfg, data/ (myid, snapshots, transaction log), zookeeper.log,
#   zookeeper.pid (the JVM's PID; fault tests may signal it), and start,
#   the launcher, which fault tests run to restart a member they killed.
# A member is ours if its pidfile names a live `java` whose cwd is its dir;
# nothing is ever stopped by name.
#
# Tuned for tests on a small loaded machine, not for production: a 100ms
# tick (a follower or leader that falls silent for 1s, syncLimit 10 ticks,
# is dropped; expired sessions are found every tick), sessions from 100ms to
# an hour, forceSync=no (the transaction log is written but not fsynced: a
# killed process loses nothing, a crash of the machine could), empty
# containers removed every second, no limit on connections per client,
# and an election that retries every second at most. By default a member
# that looks for a leader backs off up to 60s between its notifications.
# After a majority hung for a few seconds, the survivor had backed off to
# 13-25s, and the first member resumed waited that long for its peer to
# call it: a quorum formed 12-19s after a resume instead of under 1s, and
# after longer hangs no session was granted for minutes.

EXTRA_SERVICES+=(zookeeper)

readonly ZK_DIR=$STATE/zookeeper
readonly ZK_JAR=/usr/share/java/zookeeper.jar  # its manifest lists its dependencies
readonly ZK_LOGGER=/usr/share/java/slf4j-simple.jar # logs to stderr: zookeeper.log
readonly ZK_SERVERS="$HOST:21811,$HOST:21812,$HOST:21813"

# zk_member_dir N: the directory of member N (1-3).
zk_member_dir() { printf '%s/zk%s' "$ZK_DIR" "$1"; }

zk_ensure_binaries() {
	if [[ ! -r $ZK_JAR ]] || ! command -v java >/dev/null 2>&1; then
		apt_install zookeeper
	fi
	[[ -r $ZK_JAR ]] || die "$ZK_JAR not found after installing zookeeper"
	[[ -r $ZK_LOGGER ]] || apt_install libslf4j-java
	[[ -r $ZK_LOGGER ]] || die "$ZK_LOGGER not found"
	command -v java >/dev/null 2>&1 || die "java not found after installing zookeeper"
}

# zk_our_pid N: true (and OUR_PID set) if member N's pidfile names a live
# java running in its dir.
zk_our_pid() {
	local dir
	dir=$(zk_member_dir "$1")
	OUR_PID=""
	read_pid "$dir/zookeeper.pid"
	[[ -n $PID_READ ]] && pid_is_ours "$PID_READ" java "$dir" || return 1
	OUR_PID=$PID_READ
}

# zk_mode PORT: sets ZK_MODE to the member's role ("leader", "follower")
# from the srvr four-letter command, or to "" if it does not serve: a
# member that is not in a quorum answers that it is not serving.
ZK_MODE=""
zk_mode() {
	local fd line
	ZK_MODE=""
	{ exec {fd}<>"/dev/tcp/$HOST/$1"; } 2>/dev/null || return 1
	trap '' PIPE
	{ printf 'srvr' >&"$fd"; } 2>/dev/null || true
	while IFS= read -r -t 2 line <&"$fd"; do
		[[ $line == Mode:* ]] && ZK_MODE=${line#Mode: }
	done
	trap - PIPE
	exec {fd}>&-
	[[ -n $ZK_MODE ]]
}

# zk_write_member N: writes member N's configuration and launcher.
zk_write_member() {
	local n=$1 dir i
	dir=$(zk_member_dir "$n")
	mkdir -p "$dir/data"
	echo "$n" >"$dir/data/myid"
	{
		echo "# written by scripts/services.d/zookeeper.sh; rewritten at every start"
		echo "tickTime=100"
		echo "initLimit=50"
		echo "syncLimit=10"
		echo "dataDir=$dir/data"
		echo "clientPortAddress=$HOST"
		echo "clientPort=${ZK_CLIENT_PORTS[n - 1]}"
		echo "standaloneEnabled=false"
		echo "admin.enableServer=false"
		echo "4lw.commands.whitelist=srvr,ruok,mntr"
		echo "maxClientCnxns=0"
		echo "minSessionTimeout=100"
		echo "maxSessionTimeout=3600000"
		echo "forceSync=no"
		echo "preAllocSize=1024"
		echo "snapCount=20000"
		echo "autopurge.snapRetainCount=3"
		echo "autopurge.purgeInterval=1"
		for i in 1 2 3; do
			echo "server.$i=$HOST:${ZK_PEER_PORTS[i - 1]}:${ZK_ELECTION_PORTS[i - 1]}"
		done
	} >"$dir/zoo.cfg"
	# The members run at a higher priority than the tests where the user may
	# raise it (root): under make test's load, two test binaries with -race
	# and a dozen servers share two cores, and an ensemble whose members are
	# descheduled past their 1s sync limit elects again and again (once, no
	# session for minutes after a fault run).
	local nice_cmd=""
	if nice -n -5 true 2>/dev/null; then
		nice_cmd="nice -n -5"
	fi
	# The launcher starts the JVM in the background, in a session of its
	# own, and records its PID: `exec setsid` in a background subshell (not
	# a process group leader) keeps the subshell's PID for the JVM.
	cat >"$dir/start" <<EOF
#!/usr/bin/env bash
# Starts ZooKeeper member $n of the distlock test ensemble in the background
# and writes its PID to zookeeper.pid. Written by scripts/services.d/zookeeper.sh.
set -eu
cd "$dir"
(exec setsid $nice_cmd java -Xms16m -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \\
	-Djava.net.preferIPv4Stack=true -Dzookeeper.admin.enableServer=false \\
	-Dznode.container.checkIntervalMs=1000 -Dzookeeper.jmx.log4j.disable=true \\
	-Dzookeeper.fastleader.maxNotificationInterval=1000 \\
	-Dorg.slf4j.simpleLogger.showDateTime=true \\
	-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd\'T\'HH:mm:ss.SSS \\
	-cp "$ZK_JAR:$ZK_LOGGER" org.apache.zookeeper.server.quorum.QuorumPeerMain ./zoo.cfg \\
	9>&- </dev/null >>zookeeper.log 2>&1) &
echo \$! >zookeeper.pid
EOF
	chmod +x "$dir/start"
}

# zookeeper_prepare: installs the JRE and ZooKeeper (before the lock: a
# cold install takes a minute or more).
zookeeper_prepare() { zk_ensure_binaries; }

zookeeper_preflight() {
	local n port
	for n in 1 2 3; do
		zk_our_pid "$n" && continue
		for port in "${ZK_CLIENT_PORTS[n - 1]}" "${ZK_PEER_PORTS[n - 1]}" "${ZK_ELECTION_PORTS[n - 1]}"; do
			port_open "$port" && port_conflict "$port" "no live pidfile in $(zk_member_dir "$n")"
		done
	done
	return 0
}

# ZK_STARTED: the members this run started, for the log line in wait.
ZK_STARTED=()
zookeeper_start() {
	local n dir
	ZK_STARTED=()
	for n in 1 2 3; do
		zk_our_pid "$n" && continue
		dir=$(zk_member_dir "$n")
		zk_write_member "$n"
		rm -f "$dir/zookeeper.pid"
		"$dir/start" 9>&- || die "zookeeper member $n: launcher failed"
		ZK_STARTED+=("$n")
	done
}

# zookeeper_wait: waits until every member serves (a quorum formed and it
# has joined it).
zookeeper_wait() {
	local n dir deadline=$((SECONDS + TIMEOUT))
	for n in 1 2 3; do
		dir=$(zk_member_dir "$n")
		while ! { zk_our_pid "$n" && zk_mode "${ZK_CLIENT_PORTS[n - 1]}"; }; do
			if ((SECONDS >= deadline)); then
				print_log_tail "$dir/zookeeper.log"
				die "zookeeper member $n ($HOST:${ZK_CLIENT_PORTS[n - 1]}) did not serve within ${TIMEOUT}s"
			fi
			sleep 0.1
		done
	done
	for n in "${ZK_STARTED[@]}"; do
		zk_our_pid "$n"
		log "zookeeper member $n $HOST:${ZK_CLIENT_PORTS[n - 1]} started (pid $OUR_PID)"
	done
}

zookeeper_stop() {
	local n pid
	[[ -d $ZK_DIR ]] || return 0
	for n in 1 2 3; do
		zk_our_pid "$n" || continue
		pid=$OUR_PID
		stop_pid "zookeeper member $n" "$pid" || exit 1
		log "zookeeper member $n $HOST:${ZK_CLIENT_PORTS[n - 1]} stopped (pid $pid)"
	done
	rm -f "$ZK_DIR"/zk*/zookeeper.pid
}

zookeeper_env() {
	printf 'export DISTLOCK_ZOOKEEPER_SERVERS=%s\n' "$(shell_quote "$ZK_SERVERS")"
}

zookeeper_status() {
	local n port state ok=0
	for n in 1 2 3; do
		port=${ZK_CLIENT_PORTS[n - 1]}
		if zk_our_pid "$n"; then
			if zk_mode "$port"; then
				state="up (pid $OUR_PID, $ZK_MODE)"
			else
				state="NOT SERVING (pid $OUR_PID alive)"
				ok=1
			fi
		elif port_open "$port"; then
			state="down (port taken by a process that is not ours)"
			ok=1
		else
			state="down"
			ok=1
		fi
		printf '%-10s %-16s %s\n' "zookeeper" "$HOST:$port" "$state"
	done
	return $ok
}

# zookeeper_faults: the zookeeper driver's file in faults/ (see faults_write
# in services.sh): each member's start, and its client port, where srvr
# tells its role.
zookeeper_faults() {
	local n dir
	faults_begin zookeeper "ZooKeeper with forceSync=no"
	for n in 1 2 3; do
		dir=$(zk_member_dir "$n")
		[[ -x $dir/start ]] || continue
		faults_server "zookeeper-$n" "$HOST:${ZK_CLIENT_PORTS[n - 1]}" "$dir/zookeeper.pid" "$dir" "$dir/start" \
			"$HOST:${ZK_CLIENT_PORTS[n - 1]}"
	done
	faults_end
}
