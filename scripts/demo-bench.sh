#!/usr/bin/env bash
# demo-bench.sh [--fast] [--speed-only] OUTDIR DISTLOCK...: make demo's
# comparison of every driver. DISTLOCK is the command that runs distlock
# (e.g. `go run ./cmd/distlock`). It runs `distlock bench` on the test
# servers of `scripts/services.sh up`, whose environment
# (`scripts/services.sh env`) it expects: bench has no default servers, so
# every DSN is passed here, with --driver and --dsn. It writes
# OUTDIR/bench.json and OUTDIR/bench.svg, with the faults section (--faults
# --servers-dir $DISTLOCK_SERVICES_DIR). Passwords in the DSNs are never
# printed.
#
#   --fast        only the drivers of `scripts/services.sh up fast`: memory,
#                 Redlock over each client, PostgreSQL and MySQL
#   --speed-only  no faults section and no files: make demo's first stage,
#                 whose figures are measured again once the builds are done
#
# DEMO_BENCH_DURATION is each measurement's length (default 1s; make chart
# gives 2s).
set -uo pipefail
fast="" speed_only=""
while [[ ${1:-} == --* ]]; do
	case $1 in
	--fast) fast=1 ;;
	--speed-only) speed_only=1 ;;
	*) echo "$0: unknown option $1" >&2; exit 64 ;;
	esac
	shift
done
[[ $# -gt 1 ]] || { echo "usage: $0 [--fast] [--speed-only] OUTDIR DISTLOCK..." >&2; exit 64; }
out=$1
shift
vars=(DISTLOCK_REDIS_ADDRS DISTLOCK_POSTGRES_DSN DISTLOCK_MYSQL_DSN)
[[ -n $fast ]] || vars+=(DISTLOCK_MONGODB_URI DISTLOCK_ETCD_ENDPOINTS DISTLOCK_ZOOKEEPER_SERVERS DISTLOCK_NATS_DSN)
for v in "${vars[@]}"; do
	[[ -n ${!v:-} ]] || { echo "$0: $v is not set: run eval \"\$(scripts/services.sh env)\" first" >&2; exit 64; }
done

redis="redis://${DISTLOCK_REDIS_ADDRS//,/,redis://}" # a URL per master
backends=(--driver memory)
for d in goredis redigo rueidis valkey; do # Redlock over each client, on the five Redis masters
	backends+=(--driver "$d" --dsn "$redis")
done
backends+=(
	--driver postgres --dsn "$DISTLOCK_POSTGRES_DSN"
	--driver mysql --dsn "$DISTLOCK_MYSQL_DSN"
)
if [[ -z $fast ]]; then
	etcd=${DISTLOCK_ETCD_ENDPOINTS//http:\/\//} # host:port,... of the client URLs
	backends+=(
		--driver mongodb --dsn "$DISTLOCK_MONGODB_URI"
		--driver etcd --dsn "etcd://$etcd"
		--driver zookeeper --dsn "zk://$DISTLOCK_ZOOKEEPER_SERVERS"
		--driver nats --dsn "$DISTLOCK_NATS_DSN"
	)
fi
names=()
for ((i = 0; i < ${#backends[@]}; i++)); do
	[[ ${backends[i]} == --driver ]] && names+=("${backends[i + 1]}")
done
# The faults section kills and restarts the servers that services.sh's
# faults/DRIVER files name, in its state dir; 2s of load before each fault
# and at most 8s after keep it near a minute.
outputs=(--json "$out/bench.json" --svg "$out/bench.svg")
faults=(--faults --servers-dir "${DISTLOCK_SERVICES_DIR:?}" --faults-before 2s --faults-limit 8s)
if [[ -n $speed_only ]]; then
	outputs=()
	faults=()
fi
duration=${DEMO_BENCH_DURATION:-1s} # each measurement's
echo "$ distlock bench --duration $duration${outputs[*]:+ ${outputs[*]}}${faults[*]:+ ${faults[*]}} --driver D --dsn DSN... (${names[*]}; the DSNs of scripts/services.sh env)"
"$@" bench --duration "$duration" "${outputs[@]}" "${faults[@]}" "${backends[@]}"
