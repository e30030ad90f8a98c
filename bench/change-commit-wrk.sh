#!/usr/bin/env bash
# Benchmark, not a test: single-row `insert_rows` commits through wrk (a load generator in C, so that
# the client's own CPU does not decide the figure) against `tidemark dev`, side by side in one run
# with pgbench running the same INSERT on the same table of the same PostgreSQL server.
#
# Usage: bench/change-commit-wrk.sh [connections] [warmup-seconds] [seconds]   (defaults 16, 60, 20)
# Needs: wrk and /usr/bin/time (Debian's packages), psql and pgbench. BUILD=0 reuses
# node/target/tidemark.jar, JAR=path runs another build. THREADS=1 also splits the JVM's CPU by
# thread. The warm-up is a minute: dev mode's JVM (Kafka, Hazelcast, Vert.x and the PostgreSQL
# clients in one process) is still compiling for most of that, and shorter warm-ups overstate its CPU.
#
# Every request is a stateless 2026-07-28 `tools/call` with a new idempotency_key:
#   - direct commit: `insert_rows` without a plan (the read-write role is listed in
#     command.direct-commit-roles for the run), one call per row;
#   - plan + commit: each connection sends a plan, then commits the plan_id it got back, two calls per
#     row (figures count the pairs).
# A response that is not 200 or carries `"isError":true` counts as an error. CPU per commit is
# utime + stime from /proc: Tidemark's JVM (it also holds the embedded Kafka broker and Hazelcast),
# the PostgreSQL server (the postmaster and its backends) and wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNECTIONS="${1:-16}"
WARMUP="${2:-60}"
MEASURED="${3:-20}"
source bench/wrk-common.sh

export TIDEMARK_COMMAND_DIRECT_COMMIT_ROLES=tidemark_writer
export TIDEMARK_DATABASE_POOL_SIZE="$CONNECTIONS"
source bench/dev-mode.sh
datadir="$(psql "$pg" -Atc "SELECT current_setting('data_directory')")"
postmaster="$(head -1 "$datadir/postmaster.pid")"
PGOPTIONS='-c client_min_messages=warning' psql "$pg" -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE public.bench_insert (id bigserial PRIMARY KEY, v int NOT NULL);
GRANT SELECT, INSERT ON public.bench_insert TO tidemark_writer;
GRANT USAGE, SELECT ON SEQUENCE public.bench_insert_id_seq TO tidemark_writer;
SQL
# the node serves a new table once it has read the catalog again
for _ in $(seq 1 100); do
  out="$(curl -s "$url" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: insert_rows' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"insert_rows","arguments":{"table":"bench_insert","rows":[{"v":0}],"idempotency_key":"probe-'"$RANDOM"'"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"}}}}')"
  [[ "$out" == *'"mode":"commit"'* ]] && break
  sleep 0.2
done
[[ "$out" == *'"mode":"commit"'* ]] || { echo "insert_rows never succeeded: $out" >&2; exit 1; }

meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"}}'
headers="[\"Authorization\"] = \"Bearer $token\", [\"Content-Type\"] = \"application/json\", [\"Accept\"] = \"application/json, text/event-stream\", [\"MCP-Protocol-Version\"] = \"2026-07-28\", [\"Mcp-Method\"] = \"tools/call\", [\"Mcp-Name\"] = \"insert_rows\""
# $1 = 1 for plan + commit. Keys are unique across threads and runs: the thread's number, a
# counter, and the run's start time.
lua() {
  cat <<EOF
errors, first, commits, n, id, plans = 0, nil, 0, 0, 0, {}
local threads, count = {}, 0
local run = os.time()
setup = function(thread) count = count + 1; thread:set("id", count); table.insert(threads, thread) end
local function body(args) return '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"insert_rows","arguments":' .. args .. ',$meta}}' end
request = function()
  n = n + 1
  -- a plan's commit must repeat the plan's arguments: plan + commit inserts the same value each time
  local rows = string.format('"table":"bench_insert","rows":[{"v":%d}]', $1 == 1 and 7 or n)
  local plan = table.remove(plans)
  if $1 == 1 and plan == nil then
    return wrk.format("POST", nil, { $headers }, body('{' .. rows .. '}'))
  end
  local key = string.format('"idempotency_key":"w%d-%d-%d"', run, id, n)
  if plan ~= nil then key = key .. ',"plan_id":"' .. plan .. '"' end
  return wrk.format("POST", nil, { $headers }, body('{' .. rows .. ',' .. key .. '}'))
end
response = function(status, headers, body)
  if status ~= 200 or string.find(body, '"isError":true', 1, true) then
    errors = errors + 1
    if first == nil then first = status .. " " .. string.sub(body, 1, 300) end
    return
  end
  if string.find(body, '"mode":"plan"', 1, true) then
    table.insert(plans, string.match(body, '"plan_id":"([^"]+)"'))
  else
    commits = commits + 1
  end
end
done = function(summary, latency, requests)
  local e, f, c = 0, nil, 0
  for _, t in ipairs(threads) do
    e = e + (t:get("errors") or 0); c = c + (t:get("commits") or 0)
    f = f or t:get("first")
  end
  io.write(string.format("[bench] calls %d, commits %d, %.0f commits/s, p50 %.2f ms, p99 %.2f ms per call, errors %d (+%d socket)\n",
    summary.requests, c, c / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000, e,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  if f then io.write("[bench] first error: " .. f .. "\n") end
end
EOF
}
lua 0 >"$work/direct.lua"
lua 1 >"$work/plan.lua"
sed -i "s/^errors, first/id = 0\nerrors, first/" "$work/direct.lua" "$work/plan.lua"
# the thread's number, set by setup(), read at its first request
sed -i 's/^request = function()/init = function(args) id = tonumber(wrk.thread:get("id")) or 0 end\nrequest = function()/' "$work/direct.lua" "$work/plan.lua"


run() {  # $1 = name, $2 = lua
  measure "$1" "$url" "$2" "$dev_pid" commit 's/^\[bench\] calls [0-9]*, commits \([0-9]*\),.*/\1/p'
  grep -q 'errors 0 (+0 socket)' "$work/warm.out" || { echo "[bench] the warm-up had errors:"; cat "$work/warm.out"; exit 1; }
}

echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, tidemark dev pid $dev_pid at $url, postmaster $postmaster"
echo "[bench] PostgreSQL: $pg"
run "insert_rows, direct commit" "$work/direct.lua"
run "insert_rows, plan + commit" "$work/plan.lua"
echo 'INSERT INTO public.bench_insert (v) VALUES (1);' >"$work/insert.sql"
echo "[bench] load before pgbench: $(cut -d' ' -f1-3 /proc/loadavg)"
pgbench -n -M prepared -c "$CONNECTIONS" -j 2 -T "$MEASURED" -f "$work/insert.sql" "$pg" 2>&1 \
  | grep -E '^(tps|latency)' | sed 's/^/[bench] pgbench, the same INSERT: /'
echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
