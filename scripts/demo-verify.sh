#!/usr/bin/env bash
# demo-verify.sh DISTLOCK...: make demo's part on `distlock verify`.
# DISTLOCK is the command that runs distlock (e.g. `go run ./cmd/distlock`).
# It runs a short verify (the settings check, then 3s of worker processes
# contending in a scratch namespace, which is dropped at the end) on
# Redlock with fencing tokens and on PostgreSQL, on the test servers of
# `scripts/services.sh up` (whose environment it expects); then
# `verify --lint-only` on a Redis of its own, on 127.0.0.1:7110,
# deliberately unsafe: a maxmemory with the volatile-lru policy, which
# evicts lock keys (they have TTLs) under memory pressure. It stops that
# Redis by its PID, also on failure.
set -uo pipefail
[[ $# -gt 0 ]] || { echo "usage: $0 DISTLOCK..." >&2; exit 64; }
readonly PORT=7110 # in the port table of scripts/services.sh
dir=$(mktemp -d)
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

status=0
echo "$ distlock verify --driver goredis --dsn '<the five test servers>?fencing=true' --duration 3s --ttl 1s"
"$@" verify --driver goredis --dsn "redis://${DISTLOCK_REDIS_ADDRS//,/,redis://}?fencing=true" --duration 3s --ttl 1s || status=$?
echo
echo "$ distlock verify --driver postgres --dsn \$DISTLOCK_POSTGRES_DSN --duration 3s --ttl 1s"
"$@" verify --driver postgres --dsn "$DISTLOCK_POSTGRES_DSN" --duration 3s --ttl 1s || status=$?

echo
echo "demo: a Redis of the demo's own on 127.0.0.1:$PORT, with maxmemory 64mb and maxmemory-policy volatile-lru"
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
	--maxmemory 64mb --maxmemory-policy volatile-lru >"$dir/redis.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
	sleep 0.05
done
echo "$ distlock verify --lint-only --driver goredis --dsn redis://127.0.0.1:$PORT"
"$@" verify --lint-only --driver goredis --dsn "redis://127.0.0.1:$PORT"
code=$?
if [[ $code -eq 1 ]]; then
	echo "demo: exit code 1, as it should be: that Redis can evict the lock keys"
else
	echo "demo: exit code $code, but the unsafe Redis should have failed the check (1)" >&2
	status=1
fi
exit $status
