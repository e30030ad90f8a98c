#!/usr/bin/env bash
# Benchmark, not a test: commit-to-patch latency (p50, p99) of a watch that long-polls with
# wait_ms, for rows committed at a steady rate, against the embedded PostgreSQL and Kafka the tests use.
# Usage: bench/watch-latency.sh [rate-per-second] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -o -q -pl node -am test -Dtest=WatchLatencyBench -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.rate="${1:-50}" -Dbench.seconds="${2:-10}" 2>&1 | grep '^\[bench\]'
