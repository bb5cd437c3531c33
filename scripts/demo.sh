#!/usr/bin/env bash
# scripts/demo.sh - what `make demo` runs: distlock bench on every driver,
# its first figures within about a minute and a half of distlock being built,
# then the fencing example and the settings check; the servers are stopped at
# the end, also on failure.
#
# On a fresh machine three servers must first be built from source (FerretDB,
# etcd, NATS: minutes each) and ZooKeeper's JRE installed. So the demo runs in
# two stages:
#
#   1. `services.sh build` starts in the background, at nice 19 on one CPU,
#      while `services.sh up fast` starts Redis, PostgreSQL and MariaDB and
#      distlock is built. Then bench measures the speed of memory, the four
#      Redlock drivers, postgres and mysql, while the builds go on beside
#      it (demo-bench.sh --fast --speed-only): its table is printed as
#      "stage 1", and those rows are measured again in stage 2.
#   2. Once the builds are done, `services.sh up slow` starts FerretDB, etcd,
#      ZooKeeper and NATS, and bench measures every driver, with nothing
#      else running, and then its faults (demo-bench.sh): that table,
#      bench.json and bench.svg are the result.
#
# With the builds cached (a second run), there is no stage 1: `build` ends
# in a second, and bench runs once, on everything.
#
# Environment: GO (the go command, default go), DEMO_OUT (where bench.json,
# bench.svg and the logs go, default demo-output).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

readonly GO=${GO:-go}
readonly OUT=${DEMO_OUT:-demo-output}
readonly STAGE1_DRIVERS="memory, Redlock over go-redis, redigo, rueidis and valkey-go, PostgreSQL and MySQL"

t0=$SECONDS
status=0
build_pid=""
fast_pid=""
tail_pid=""
work=$(mktemp -d "${TMPDIR:-/tmp}/distlock-demo.XXXXXX") || exit 1
phases=()      # "name Ns", one per phase, for the last line
build_times="" # services.sh build's last line

say() { printf 'demo: %s\n' "$*"; }

# phase NAME START: records that phase NAME, begun at START, has ended.
phase() { phases+=("$1 $((SECONDS - $2))s"); }

# joined: the phases, comma-separated.
joined() {
	local IFS=,
	printf '%s' "${phases[*]}" | sed 's/,/, /g'
}

# wait_for PID SECONDS: true once PID has ended, false if it still runs
# after SECONDS. (Polled, so that a signal to the demo is handled at once.)
wait_for() {
	local deadline=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# stop_job PID: stops a background job of ours and waits for it.
stop_job() {
	[[ -n $1 ]] && kill -0 "$1" 2>/dev/null || return 0
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cleanup() {
	stop_job "${go_pid:-}"
	stop_job "$build_pid"
	stop_job "$fast_pid"
	stop_job "$tail_pid"
	eval "$(scripts/services.sh env)"
	if [[ -d ${DISTLOCK_SERVICES_DIR:-}/logs ]]; then
		mkdir -p "$OUT/logs"
		cp -r "$DISTLOCK_SERVICES_DIR/logs/." "$OUT/logs/"
	fi
	scripts/services.sh down
	rm -rf "$work"
	echo
	[[ ! -s $OUT/bench.json ]] || say "chart $OUT/bench.svg, every figure in $OUT/bench.json"
	[[ ! -d $OUT/logs ]] || say "install and build logs in $OUT/logs/"
	say "times: $(joined)${phases[*]:+, }total $((SECONDS - t0))s"
	[[ -z $build_times ]] || say "services.sh $build_times"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

mkdir -p "$OUT"
rm -rf "$OUT/bench.json" "$OUT/bench.svg" "$OUT/logs" # an earlier run's

# The servers built from source, in the background. Their lines go to a file,
# shown once stage 1's table is out.
say "building FerretDB, etcd and NATS and installing ZooKeeper's JRE in the background (at nice 19, on one CPU)"
scripts/services.sh build 2>"$work/build.out" &
build_pid=$!
start=$SECONDS
scripts/services.sh up fast 2>"$work/fast.out" &
fast_pid=$!

say "building distlock (go build ./cmd/distlock) while Redis, PostgreSQL and MariaDB start"
# go's output (its module downloads, on a fresh machine) goes to a log, shown
# only if the build fails; a line every 30s says it still runs.
$GO build -o "$work/distlock" ./cmd/distlock >"$work/distlock-build.log" 2>&1 &
go_pid=$!
while ! wait_for "$go_pid" 30; do
	say "building distlock: $((SECONDS - start))s so far"
done
wait "$go_pid" || {
	status=$?
	cat "$work/distlock-build.log" >&2
	say "could not build distlock"
	exit $status
}
phase "distlock build" "$start"
built=$SECONDS
say "distlock built at $((built - t0))s"
wait "$fast_pid" || status=$?
fast_pid=""
cat "$work/fast.out"
((status == 0)) || { say "the first stage's servers did not start"; exit $status; }
eval "$(scripts/services.sh env)"

waited=""
if kill -0 "$build_pid" 2>/dev/null; then
	start=$SECONDS
	say "stage 1: distlock bench on $STAGE1_DRIVERS, 1s per measurement (about 40s),"
	say "while the builds run beside it: stage 2 measures these again, with nothing else running"
	scripts/demo-bench.sh --fast --speed-only "$OUT" "$work/distlock" || status=$?
	phase "stage 1 bench" "$start"
	say "stage 1 ended $((SECONDS - built))s after distlock was built"
	start=$SECONDS
	waited=1
	echo
	say "waiting for the builds (their output: $DISTLOCK_SERVICES_DIR/logs/)"
	# In the background, so that a signal to the demo is handled at once.
	tail -n +1 -f --pid="$build_pid" "$work/build.out" &
	tail_pid=$!
	wait "$tail_pid"
	tail_pid=""
else
	cat "$work/build.out"
fi
build_status=0
wait "$build_pid" || build_status=$?
build_pid=""
build_times=$(grep -o 'build: done in .*' "$work/build.out")
[[ -z $waited ]] || phase "waiting for the builds" "$start"

fast=() # demo-bench.sh's --fast, when the second stage's servers are missing
if ((build_status == 0)); then
	start=$SECONDS
	say "stage 2: FerretDB, etcd, ZooKeeper and NATS"
	if scripts/services.sh up slow; then
		phase "up slow" "$start"
	else
		status=1
		fast=(--fast)
		say "the second stage's servers did not start: the comparison is left with the first stage's drivers"
	fi
else
	status=$build_status
	fast=(--fast)
	say "the builds failed (see above): the comparison is left with the first stage's drivers"
fi

start=$SECONDS
if ((${#fast[@]} == 0)); then
	say "distlock bench, every driver (memory; Redlock over go-redis, redigo, rueidis and valkey-go; PostgreSQL, MySQL, MongoDB, etcd, ZooKeeper, NATS), 1s per measurement, then one fault per server backend (about 2 minutes)"
else
	say "distlock bench on $STAGE1_DRIVERS, 1s per measurement, then one fault per server backend"
fi
scripts/demo-bench.sh "${fast[@]}" "$OUT" "$work/distlock" || status=$?
phase "bench" "$start"

start=$SECONDS
echo
say "a paused holder's stale write, without and with fencing tokens"
$GO run ./examples/fencing || status=$?
echo
say "distlock verify: 3s of worker processes contending on Redlock and PostgreSQL, then the settings check on an unsafe Redis"
scripts/demo-verify.sh "$work/distlock" || status=$?
phase "fencing and verify" "$start"
exit $status
