#!/usr/bin/env bash
# Benchmark, not a test: commits per second and p50/p99 of single-row insert_rows with
# idempotency keys (direct commit, and plan + commit) at a concurrency, beside pgbench running the
# same INSERT, against the embedded PostgreSQL the tests use. Needs pgbench on the PATH.
# Usage: [INSTANCES=n] bench/change-commit.sh [concurrency] [seconds]
# INSTANCES: node.command-instances of the node (0, the default: one per event loop)
# WARMUP: seconds of unreported commits before the measures (default 15), so the JIT has compiled the path
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -pl node -am test -Dtest=ChangeCommitBench -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.concurrency="${1:-16}" -Dbench.seconds="${2:-10}" -Dbench.instances="${INSTANCES:-0}" -Dbench.warmup="${WARMUP:-15}" 2>&1 | grep '^\[bench\]'
