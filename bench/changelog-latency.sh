#!/usr/bin/env bash
# Benchmark, not a test: commit-to-local-bus latency on two gateway nodes (p50, p99) at a steady
# rate, and relay throughput, against the embedded PostgreSQL and Kafka the tests use.
# Usage: bench/changelog-latency.sh [rate-per-second] [seconds] [burst-changes] [warm-up-seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -pl node -am test -Dtest=ChangelogLatencyBench -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.rate="${1:-500}" -Dbench.seconds="${2:-10}" -Dbench.burst="${3:-20000}" -Dbench.warmup="${4:-5}" 2>&1 | grep '^\[bench\]'
