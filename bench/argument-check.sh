#!/usr/bin/env bash
# Benchmark, not a test: the cost of Tidemark's argument check alone (the JSON Schema of a tool,
# through vertx-json-schema, and the depth and NUL walks), on one thread, outside any server.
# Building the arguments is inside the timed loop and costs little beside the check.
#
# Usage: bench/argument-check.sh [rounds] [checks-per-round]   (defaults 8, 200000)
# Needs: a JDK 17. BUILD=0 reuses the installed modules (./mvnw install -DskipTests).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${BUILD:-1}" != 0 ]]; then
  ./mvnw -q -Dstyle.color=never -pl gateway -am install -DskipTests
fi
cp="$(mktemp)"
trap 'rm -f "$cp"' EXIT
./mvnw -q -o -Dstyle.color=never -pl gateway dependency:build-classpath -Dmdep.outputFile="$cp" >/dev/null
echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
java -cp "gateway/target/classes:$(cat "$cp")" bench/ArgumentCheckBench.java "$@"
echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
