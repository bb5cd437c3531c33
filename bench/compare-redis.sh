#!/usr/bin/env bash
# compare-redis.sh OUT
# compare-redis.sh --tables OUT
#
# Runs the Redis comparison of README.md ("The Redis comparison"): the
# floor, uncontended acquire+release and 16 goroutines on distinct keys,
# for every implementation, COUNT times each. It saves go test's output to
# OUT and prints two benchstat tables from it: acquire+release p50 against
# the floor, by client and N, and the time per operation of 16 goroutines,
# ours against redsync, by client and N. With --tables it only prints the
# tables of an OUT written before.
#
# It starts and stops no server. The servers must be up (scripts/services.sh
# up); their addresses come from `scripts/services.sh env`, and any that is
# not on 127.0.0.1 is refused. The benchmarks take the Redis tests' lock
# ($DISTLOCK_SERVICES_DIR/redis-tests.lock), so they wait for a `make test`
# that holds it.
#
# Environment: BENCHTIME (go test -benchtime, default 2000x), COUNT (how
# many times the test binary runs every benchmark once, one run after
# another, default 10), BENCHSTAT (the benchstat binary; default
# ~/go/bin/benchstat, then benchstat on PATH, then `go run
# golang.org/x/perf/cmd/benchstat@latest`). With the defaults a run takes
# about 4-5 minutes on two shared cores (39 sub-benchmarks, 10 runs each),
# up to 8 when the machine is busy.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

usage() {
	sed -n '2,3p' "$0" | sed 's/^# /usage: /' >&2
	exit 2
}

# benchstat runs the first benchstat found (see the header).
benchstat() {
	if [[ -n ${BENCHSTAT:-} ]]; then
		"$BENCHSTAT" "$@"
	elif [[ -x $HOME/go/bin/benchstat ]]; then
		"$HOME/go/bin/benchstat" "$@"
	elif command -v benchstat >/dev/null; then
		command benchstat "$@"
	else
		go run golang.org/x/perf/cmd/benchstat@latest "$@"
	fi
}

# tables RAW prints the comparison's tables from go test's output RAW.
tables() {
	local raw=$1
	split=$(mktemp)
	trap 'rm -f "$split"' EXIT
	# The floor has no client library: its lines are repeated once per
	# client, so that each client's row holds the floor as its base.
	awk -v clients="goredis redigo rueidis valkey" '
		/^BenchmarkFloor\// && /\/client=raw\// {
			n = split(clients, c, " ")
			for (i = 1; i <= n; i++) {
				line = $0
				sub(/\/client=raw\//, "/client=" c[i] "/", line)
				print line
			}
			next
		}
		{ print }' "$raw" >"$split"

	echo
	echo "== acquire+release p50 (µs) against the floor, by N and client"
	echo "   floor: SET NX PX then EVALSHA compare-and-delete, raw sockets; floor-workers: the same through a goroutine per server (N=5); floor-del: then DEL"
	benchstat -filter '.unit:p50-µs .name:(Floor OR AcquireRelease)' -ignore .name \
		-table /N -row /client -col '/lib@(floor floor-workers floor-del ours oursqf redsync rueidislock)' "$split"

	echo
	echo "== 16 goroutines on distinct keys, time per acquire+release (sec/op), against redsync with the same client"
	benchstat -filter '.name:AcquireRelease_16keys .unit:sec/op' \
		-table /N -row /client -col '/lib@(redsync ours oursqf rueidislock)' "$raw"

	# failed/op is a benchmark's share of operations that failed (a node
	# timed out); they are left out of its percentiles.
	awk '/^Benchmark/ { for (i = 3; i < NF; i++) if ($(i+1) == "failed/op" && $i + 0 > 0) { print "   " $1 ": " $i " failed/op"; bad = 1 } }
		END { if (bad) print "== some operations failed (above): their percentiles leave them out" }' "$raw"
}

case ${1:-} in
--tables)
	[[ $# -eq 2 ]] || usage
	tables "$2"
	exit
	;;
"" | -*) usage ;;
esac
[[ $# -eq 1 ]] || usage
out=$1

eval "$("$repo/scripts/services.sh" env)"
IFS=, read -ra addrs <<<"${DISTLOCK_REDIS_ADDRS:-}"
if [[ ${#addrs[@]} -lt 5 ]]; then
	echo "compare-redis: want 5 Redis servers from scripts/services.sh env, have '${DISTLOCK_REDIS_ADDRS:-}'" >&2
	exit 1
fi
for a in "${addrs[@]}"; do
	if [[ ! $a =~ ^127\.0\.0\.1:[0-9]+$ || $a == 127.0.0.1:6379 ]]; then
		echo "compare-redis: refusing Redis server $a: only the test servers on 127.0.0.1" >&2
		exit 1
	fi
done

benchtime=${BENCHTIME:-2000x}
count=${COUNT:-10}
echo "compare-redis: servers ${DISTLOCK_REDIS_ADDRS}, -benchtime $benchtime -count $count, output in $out" >&2
echo "compare-redis: $(uptime)" >&2
SECONDS=0
cd "$here"
# One test binary, run COUNT times over every benchmark, rather than go
# test -count, which runs one benchmark's counts in a row: the floor's ten
# would then be a minute or more apart from ours, on a machine whose load
# moves.
bindir=$(mktemp -d)
go test -c -o "$bindir/bench.test" .
: >"$out"
for ((i = 1; i <= count; i++)); do
	echo "compare-redis: run $i of $count" >&2
	"$bindir/bench.test" -test.run '^$' \
		-test.bench 'BenchmarkFloor$|BenchmarkAcquireRelease$|BenchmarkAcquireRelease_16keys$' \
		-test.benchtime "$benchtime" -test.count 1 -test.timeout 60m | tee -a "$out"
done
rm -rf "$bindir"
echo "compare-redis: $((SECONDS / 60))m$((SECONDS % 60))s; $(uptime)" >&2
tables "$out"
