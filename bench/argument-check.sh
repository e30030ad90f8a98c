#!/usr/bin/env bash
# Benchmark, not a test: the cost of Tidemark's argument check alone (the JSON Schema of a tool,
# through its compiled SchemaCheck, and the depth and NUL walk), on one thread, outside any server;
# beside it, in the same rounds, vertx-json-schema alone on the same schemas and arguments.
# Building the arguments is inside the timed loop and costs little beside the check.
#
# Usage: bench/argument-check.sh [rounds] [checks-per-round]   (defaults 8, 200000)
# Needs: a JDK 17. The build compiles what changed (the reactor resolves the other modules' classes
# only in a build that compiles them, so there is no BUILD=0 here). The benchmark's class is
# gateway/src/test/java/dev/tidemark/gateway/impl/tool/ArgumentCheckBench.java, in the package it times.
set -euo pipefail
cd "$(dirname "$0")/.."
cp="$(mktemp)"
trap 'rm -f "$cp"' EXIT
./mvnw -q -o -Dstyle.color=never -pl gateway -am test-compile dependency:build-classpath -Dmdep.outputFile="$cp" \
  -Dmdep.includeScope=test >/dev/null
echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
java -cp "gateway/target/test-classes:gateway/target/classes:$(cat "$cp")" dev.tidemark.gateway.impl.tool.ArgumentCheckBench "$@"
echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
