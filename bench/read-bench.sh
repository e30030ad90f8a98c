#!/usr/bin/env bash
# Benchmark, not a test: read tools through `tools/call` over HTTP (JSON answers, not SSE) against
# `tidemark dev`, side by side with `pgbench -S` on the same embedded PostgreSQL.
#
# Usage: bench/read-bench.sh [threads] [warmup-seconds] [seconds]
# The warm-up (30 s by default) is per tool: a fresh JVM compiles the hot paths during its first
# half minute, and a shorter warm-up measures the compiler as much as Tidemark.
# Needs: a JDK 17 `java`, `psql` and `pgbench` on PATH. Set BUILD=0 to reuse node/target/tidemark.jar,
# JAR=path to run another build (for before/after figures; implies nothing about BUILD).
# Prints the load average next to every figure: the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS="${1:-16}"
WARMUP="${2:-30}"
SECONDS_MEASURED="${3:-20}"

if [[ "${BUILD:-1}" != 0 ]]; then
  ./mvnw -q -pl node -am package -DskipTests
fi

source bench/dev-mode.sh
datadir="$(psql "$pg" -Atc "SELECT current_setting('data_directory')")"
postmaster="$(head -1 "$datadir/postmaster.pid")"
pool="$(grep -o 'poolSize=[0-9]*' "$log" | head -1 || true)"
echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, tidemark dev pid $dev_pid ${pool:+($pool) }at $url, postmaster $postmaster"

for tool in get_row query; do
  echo "[bench] load before $tool: $(cut -d' ' -f1-3 /proc/loadavg)"
  java bench/ReadBench.java "$url" "$token" "$tool" "$THREADS" "$WARMUP" "$SECONDS_MEASURED" "$dev_pid" "$postmaster"
done

# pgbench -S into its own database on the same server
base="${pg%/*}"
psql "$pg" -qc "DROP DATABASE IF EXISTS tm_pgbench" -c "CREATE DATABASE tm_pgbench" >/dev/null
pgbench -q -i -s 1 "$base/tm_pgbench" >/dev/null 2>&1
echo "[bench] load before pgbench: $(cut -d' ' -f1-3 /proc/loadavg)"
pgbench -S -n -c "$THREADS" -j 2 -T "$SECONDS_MEASURED" "$base/tm_pgbench" 2>&1 \
  | grep -E 'number of transactions actually processed|latency average|^tps' | sed 's/^/[bench] pgbench -S: /'
# the statements of one get_row call, sent by pgbench over the same connection count: the ceiling
# PostgreSQL alone puts on get_row (prepared, as Tidemark keeps them, but one round trip per statement)
echo "[bench] load before pgbench -f get_row statements: $(cut -d' ' -f1-3 /proc/loadavg)"
pgbench -n -M prepared -f bench/pgbench-get-row.sql -c "$THREADS" -j 2 -T "$SECONDS_MEASURED" "$pg" 2>&1 \
  | grep -E 'number of transactions actually processed|latency average|^tps' | sed 's/^/[bench] pgbench -f get_row statements: /'
echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
