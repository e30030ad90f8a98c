#!/usr/bin/env bash
# Profile, not a benchmark: where the JVM's CPU goes during `get_row` under wrk. Starts `tidemark
# dev`, warms up (20 s, or WARMUP seconds), records 20 s of load with JFR (settings=profile, one
# sample every SAMPLE_MS, default 2 ms), and prints three tables of the event-loop samples: the share
# whose stacks pass through each part (a sample counts for every part on its stack; 64 frames of each,
# where `jfr print` shows 5 unless told), each sample once by the library or Tidemark package nearest
# the top of its stack (its own time), and the methods most often on top. The profiler slows the
# server: read the shares, not the rate it prints.
#
# Usage: bench/get-row-profile.sh [out-prefix]   (default /tmp/get-row-profile)
# Needs: wrk (Debian's package), the JDK's jcmd and jfr, python3. BUILD=0 reuses node/target/tidemark.jar.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/get-row-profile}"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
if [[ "${BUILD:-1}" != 0 ]]; then
  ./mvnw -q -pl node -am package -DskipTests
fi
source bench/dev-mode.sh
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"}}'
cat >"$work/get-row.lua" <<LUA
request = function()
  local body = string.format('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_row","arguments":{"table":"customers","key":%d},$meta}}', math.random(1, 500))
  return wrk.format("POST", nil, { ["Authorization"] = "Bearer $token", ["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream", ["MCP-Protocol-Version"] = "2026-07-28", ["Mcp-Method"] = "tools/call", ["Mcp-Name"] = "get_row" }, body)
end
LUA
wrk -t 2 -c 16 -d "${WARMUP:-20}s" -s "$work/get-row.lua" "$url" >/dev/null
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
echo "[profile] load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# JFR's profile settings sample every 10 ms; SAMPLE_MS (default 2) samples more often, for shares
# that do not move by whole points from one run to the next
jfr configure --input profile "jdk.ExecutionSample#period=${SAMPLE_MS:-2}ms" --output "$work/sample.jfc" >/dev/null
jcmd "$dev_pid" JFR.start name=get-row settings="$work/sample.jfc" duration=25s filename="$out.jfr" >/dev/null
t0="$(ticks "$dev_pid")"
wrk -t 2 -c 16 -d 20s -s "$work/get-row.lua" "$url" >"$out.wrk"
t1="$(ticks "$dev_pid")"
calls="$(awk '/requests in/ {print $1}' "$out.wrk")"
echo "[profile] $calls calls, $(grep Requests/sec "$out.wrk" | awk '{print $2}') calls/s with the profiler on," \
  "$(awk -v t=$((t1 - t0)) -v c="$calls" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t * 1000 / hz / c }') ms of the JVM's CPU per call"
echo "[profile] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
sleep 7  # the recording ends 25 s after it started
jfr print --json --stack-depth 64 --events jdk.ExecutionSample "$out.jfr" >"$out.json"
python3 - "$out.json" <<'PY'
import collections, json, sys
# exclusive parts: the first that matches a frame wins, so the narrower prefixes come first
libraries = {
    "Micrometer": ("io.micrometer", "io.vertx.micrometer"),
    "OpenTelemetry": ("io.opentelemetry",),
    "the argument check (vertx-json-schema)": ("io.vertx.json.schema",),
    "the PostgreSQL client": ("io.vertx.pgclient", "io.vertx.sqlclient"),
    "Jackson": ("com.fasterxml.jackson",),
    "Vert.x's JSON objects": ("io.vertx.core.json",),
    "the event bus": ("io.vertx.core.eventbus",),
    "Vert.x's HTTP server": ("io.vertx.core.http", "io.vertx.ext.web"),
    "Netty": ("io.netty",),
    "Vert.x's other parts": ("io.vertx",),
    "logging": ("org.slf4j", "ch.qos.logback", "org.apache.logging"),
    "socket reads and writes": ("sun.nio.ch",),
    "Tidemark's gateway": ("dev.tidemark.gateway",),
    "Tidemark's database layer": ("dev.tidemark.database",),
    "Tidemark's query service": ("dev.tidemark.query",),
    "Tidemark's contract": ("dev.tidemark.contract",),
    "Tidemark, other": ("dev.tidemark",),
}
# a sample counts for every part on its stack: the libraries above, and these narrower parts
parts = {name: libraries[name] for name in ("Micrometer", "OpenTelemetry", "the argument check (vertx-json-schema)",
    "the PostgreSQL client", "Jackson", "Vert.x's JSON objects", "the event bus", "socket reads and writes")}
parts.update({
    "Netty's HTTP codec": ("io.netty.handler.codec.http",),
    "ResultRenderer": ("dev.tidemark.gateway.impl.tool.ResultRenderer",),
    "the guards and the credential check (McpEndpoint.admit)": ("dev.tidemark.gateway.impl.McpEndpoint.admit",),
    "parsing the request (Envelope.parse)": ("dev.tidemark.gateway.impl.jsonrpc.Envelope.parse",),
    "the query service's call and reply (QueryVerticle.onMessage)": ("dev.tidemark.query.QueryVerticle.onMessage",),
    "writing the response (ResponseChannel.finish)": ("dev.tidemark.gateway.impl.stream.ResponseChannel.finish",),
})
counts, own, leaves, loop, total = collections.Counter(), collections.Counter(), collections.Counter(), 0, 0
for event in json.load(open(sys.argv[1]))["recording"]["events"]:
    stack = event["values"].get("stackTrace")
    if not stack or not stack["frames"]:
        continue
    total += 1
    if not (event["values"].get("sampledThread", {}).get("javaName") or "").startswith("vert.x-eventloop"):
        continue
    loop += 1
    types = [f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"] for f in stack["frames"]]
    for part, prefixes in parts.items():
        if any(t.startswith(prefixes) for t in types):
            counts[part] += 1
    # its own time: the sample goes to the part of the frame nearest the top of the stack that has one
    for t in types:
        part = next((p for p, prefixes in libraries.items() if t.startswith(prefixes)), None)
        if part:
            own[part] += 1
            break
    else:
        own["elsewhere (" + ".".join(types[0].split(".")[:3]) + ")"] += 1
    leaves[types[0]] += 1
print(f"[profile] {loop} of {total} samples on event-loop threads")
print("[profile] samples whose stacks pass through each part (parts overlap):")
for part, n in counts.most_common():
    print(f"[profile]   {part}: {n * 100 / max(loop, 1):.1f} %")
print("[profile] each sample once, by the library or Tidemark package it ran in:")
for part, n in own.most_common(25):
    print(f"[profile]   {part}: {n * 100 / max(loop, 1):.1f} %")
print("[profile] methods on top of the stack:")
for method, n in leaves.most_common(25):
    print(f"[profile]   {method}: {n * 100 / max(loop, 1):.1f} %")
PY
