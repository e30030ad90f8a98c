#!/usr/bin/env bash
# Benchmark, not a test: events delivered and acknowledged per second by 1 and 4 workers of one
# consumer (events_next with max events, then events_ack, over HTTP), the first lease's latency,
# and the lease round trip p50/p99, against the embedded PostgreSQL and Kafka the tests use.
# Prints the load average beside it.
# Usage: bench/events.sh [changes] [max] [nack-every]
#   max: events per lease, events_next's argument (default 100)
#   nack-every: hand back the first delivery of every Nth change with events_nack (default 0, none)
# The backlog case: bench/events.sh 100000 500; the small backlog: bench/events.sh 2000 200 7
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
./mvnw -o -q -pl node -am test -Dtest=EventsBench -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.changes="${1:-20000}" -Dbench.max="${2:-100}" -Dbench.nack-every="${3:-0}" 2>&1 | grep '^\[bench\]'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
