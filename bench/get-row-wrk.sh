#!/usr/bin/env bash
# Benchmark, not a test: `get_row` through wrk (a load generator in C, so that the client's own CPU
# does not decide the figure), side by side in one run with MCP Toolbox's `postgres-sql` tool on
# the same SELECT and the same database, and with `pgbench -S` on the same PostgreSQL server.
#
# Usage: bench/get-row-wrk.sh [connections] [warmup-seconds] [seconds]   (defaults 16, 30, 20)
# Needs: wrk and /usr/bin/time (Debian's packages), psql and pgbench, node and npm (MCP Toolbox is
# installed from npm into bench/agent-tasks/node_modules on first use). BUILD=0 reuses
# node/target/tidemark.jar, JAR=path runs another build. PEERS=0 measures Tidemark alone (for before
# and after figures of two builds, run back to back). THREADS=1 also splits each server's CPU by thread.
#
# Both servers get the same request shape: a stateless 2026-07-28 `tools/call` over HTTP, with a
# random key from 1 to 500 (the demo `customers`), 16 connections and 2 wrk threads. Tidemark
# answers as the read-write token's role; Toolbox logs in as the embedded server's superuser, as
# it has no notion of a caller's role. CPU per call is utime + stime from /proc, per process:
# Tidemark's JVM (which also holds Hazelcast and the embedded Kafka broker), Toolbox, the
# PostgreSQL server (the postmaster and its backends) and wrk itself.
set -euo pipefail
cd "$(dirname "$0")/.."
CONNECTIONS="${1:-16}"
WARMUP="${2:-30}"
MEASURED="${3:-20}"
source bench/wrk-common.sh

[[ -x bench/agent-tasks/node_modules/@toolbox-sdk/server-linux-x64/bin/toolbox ]] \
  || (cd bench/agent-tasks && npm install --no-audit --no-fund >/dev/null)
toolbox_bin="$PWD/bench/agent-tasks/node_modules/@toolbox-sdk/server-linux-x64/bin/toolbox"

source bench/dev-mode.sh
datadir="$(psql "$pg" -Atc "SELECT current_setting('data_directory')")"
postmaster="$(head -1 "$datadir/postmaster.pid")"

# postgresql://user:password@host:port/db
creds="${pg#postgresql://}"; creds="${creds%%@*}"
pg_user="${creds%%:*}"; pg_password="${creds#*:}"; [[ "$creds" == *:* ]] || pg_password=""
hostport="${pg#*@}"; hostport="${hostport%%/*}"
pg_host="${hostport%%:*}"; pg_port="${hostport##*:}"
pg_db="${pg##*/}"; pg_db="${pg_db%%\?*}"

toolbox_port=$((40000 + RANDOM % 20000))
cat >"$work/toolbox.yaml" <<EOF
kind: source
name: demo
type: postgres
host: $pg_host
port: $pg_port
database: $pg_db
user: $pg_user
password: "$pg_password"
---
kind: tool
name: get_customer
type: postgres-sql
source: demo
description: One customer by id.
parameters:
- name: id
  type: integer
  description: The customer's id.
statement: SELECT * FROM customers WHERE id = \$1 LIMIT 1
EOF
"$toolbox_bin" --config "$work/toolbox.yaml" --address 127.0.0.1 --port "$toolbox_port" --disable-version-check \
  --disable-reload --enable-draft-specs --log-level WARN >"$work/toolbox.log" 2>&1 &
toolbox_pid=$!
trap 'kill "$toolbox_pid" 2>/dev/null || true; wait "$toolbox_pid" 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$toolbox_port/" && break
  sleep 0.2
done

# wrk scripts: one request per call with a random key; a response that is not 200 or carries an
# error counts as an error, and the first one is printed
lua() {  # $1 = headers (Lua table body), $2 = body printf format with %d for the key
  cat <<EOF
-- globals, so that done() can read each thread's own with thread:get
errors, first = 0, nil
local threads = {}
setup = function(thread) table.insert(threads, thread) end
request = function()
  local body = string.format('$2', math.random(1, 500))
  return wrk.format("POST", nil, { $1 }, body)
end
response = function(status, headers, body)
  if status ~= 200 or string.find(body, '"isError":true', 1, true) then
    errors = errors + 1
    if first == nil then first = status .. " " .. string.sub(body, 1, 300) end
  end
end
done = function(summary, latency, requests)
  local e, f = 0, nil
  for _, t in ipairs(threads) do
    e = e + (t:get("errors") or 0)
    f = f or t:get("first")
  end
  io.write(string.format("[bench] calls %d, %.0f calls/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms, errors %d (+%d socket)\n",
    summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, e, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  if f then io.write("[bench] first error: " .. f .. "\n") end
end
EOF
}
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"}}'
lua "[\"Authorization\"] = \"Bearer $token\", [\"Content-Type\"] = \"application/json\", [\"Accept\"] = \"application/json, text/event-stream\", [\"MCP-Protocol-Version\"] = \"2026-07-28\", [\"Mcp-Method\"] = \"tools/call\", [\"Mcp-Name\"] = \"get_row\"" \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get_row\",\"arguments\":{\"table\":\"customers\",\"key\":%d},$meta}}" \
  >"$work/tidemark.lua"
lua "[\"Content-Type\"] = \"application/json\", [\"Accept\"] = \"application/json, text/event-stream\", [\"MCP-Protocol-Version\"] = \"2026-07-28\", [\"Mcp-Method\"] = \"tools/call\", [\"Mcp-Name\"] = \"get_customer\"" \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get_customer\",\"arguments\":{\"id\":%d},$meta}}" \
  >"$work/toolbox.lua"


run() {  # $1 = name, $2 = url, $3 = lua, $4 = server pid
  measure "$1" "$2" "$3" "$4" call 's/^\[bench\] calls \([0-9]*\),.*/\1/p'
}

echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, tidemark dev pid $dev_pid at $url, toolbox pid $toolbox_pid, postmaster $postmaster"
run "Tidemark get_row" "$url" "$work/tidemark.lua" "$dev_pid"
[[ "${PEERS:-1}" == 0 ]] && { echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0; }
run "MCP Toolbox postgres-sql" "http://127.0.0.1:$toolbox_port/mcp" "$work/toolbox.lua" "$toolbox_pid"

base="${pg%/*}"
psql "$pg" -qc "DROP DATABASE IF EXISTS tm_pgbench" -c "CREATE DATABASE tm_pgbench" >/dev/null
pgbench -q -i -s 1 "$base/tm_pgbench" >/dev/null 2>&1
echo "[bench] load before pgbench -S: $(cut -d' ' -f1-3 /proc/loadavg)"
pgbench -S -M prepared -n -c "$CONNECTIONS" -j 2 -T "$MEASURED" "$base/tm_pgbench" 2>&1 \
  | grep -E '^tps' | sed 's/^/[bench] pgbench -S -M prepared: /'
echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
