#!/usr/bin/env bash
# Benchmark, not a test: one caller sends more `query` calls at once than a node lets it run, against
# `tidemark dev`, and every answer is sorted by how it ended, with each kind's latency
# (bench/OverloadBench.java). A call past the caller's running calls (auth.max-concurrent-calls)
# and its queue (auth.max-queued-calls) should end at once with a retriable UNAVAILABLE
# (waited_for: queue); the calls admitted should keep a bounded latency; none should hang or end as
# INTERNAL (docs/performance.md#overload).
#
# Usage: bench/overload.sh [clients] [warmup-seconds] [seconds] [statement-ms] [backoff-ms]
# Each statement holds its connection for statement-ms (pg_sleep), so the pool, not the CPU, sets
# the capacity: database.pool-size connections / statement-ms. backoff-ms (default 0) is how long a
# client waits after a refusal before it sends again: 0 is a client that retries at once. Needs a JDK 17 `java`. Set BUILD=0
# to reuse node/target/tidemark.jar, JAR=path to run another build.
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS="${1:-256}"
WARMUP="${2:-10}"
SECONDS_MEASURED="${3:-30}"
STATEMENT_MS="${4:-50}"
BACKOFF_MS="${5:-0}"

if [[ "${BUILD:-1}" != 0 ]]; then
  ./mvnw -q -pl node -am package -DskipTests
fi

source bench/dev-mode.sh
echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, tidemark dev pid $dev_pid at $url"
echo "[bench] load before: $(cut -d' ' -f1-3 /proc/loadavg)"
java bench/OverloadBench.java "$url" "$token" "$CLIENTS" "$WARMUP" "$SECONDS_MEASURED" "$STATEMENT_MS" "$BACKOFF_MS"
echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "[bench] INTERNAL in the node's log: $(grep -c 'INTERNAL' "$log" || true)"
