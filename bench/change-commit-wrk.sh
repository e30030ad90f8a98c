#!/usr/bin/env bash
# Benchmark, not a test: single-row `insert_rows` commits through wrk (a load generator in C, so that
# the client's own CPU does not decide the figure) against `tidemark dev`, side by side in one run
# with two pgbench peers on the same table of the same PostgreSQL server: the bare INSERT, and a
# script of the work a commit must do in one transaction (see "The same work" below). Then one
# connection sends direct commits one after another, for an unloaded commit's latency. Plan + commit
# runs first, then the direct commits, each after its own warm-up.
#
# Usage: bench/change-commit-wrk.sh [connections] [warmup-seconds] [seconds]   (defaults 16, 60, 20)
# Needs: wrk and /usr/bin/time (Debian's packages), psql and pgbench. BUILD=0 reuses
# node/target/tidemark.jar, JAR=path runs another build. THREADS=1 also splits the JVM's CPU by
# thread. PROFILE=path records the measured direct commits with JFR into path.jfr (one sample every
# 2 ms) and prints the JVM's own time by package. The warm-up is a minute: dev mode's JVM (Kafka,
# Hazelcast, Vert.x and the PostgreSQL clients in one process) is still compiling for most of that,
# and shorter warm-ups overstate its CPU.
#
# Every request is a stateless 2026-07-28 `tools/call` with a new idempotency_key:
#   - direct commit: `insert_rows` without a plan (the read-write role is listed in
#     command.direct-commit-roles for the run), one call per row;
#   - plan + commit: each connection sends a plan, then commits the plan_id it got back, two calls per
#     row (figures count the pairs);
#   - an unloaded direct commit: the same call on one connection, each sent when the one before it
#     was answered, for as long as a measured run (its p50 and p99 are the latency of one call).
# A response that is not 200 or carries `"isError":true` counts as an error. CPU per commit is
# utime + stime from /proc: Tidemark's JVM (it also holds the embedded Kafka broker and Hazelcast),
# the PostgreSQL server (the postmaster and its backends) and wrk.
#
# The same work: the statements a direct commit runs, as pgbench sends them, one at a time
# (Tidemark pipelines its own), as the superuser:
#   1. the idempotency lookup (ChangeRunner's LOOKUP_SQL, as Tidemark's login runs it before the transaction);
#   2. BEGIN, and the setup of CallerSessions.SETUP with ChangeRunner's additions: the statement timeout, a
#      caller identity of the size Tidemark signs, the trace context, tidemark.plan = on (which wakes the
#      table's plan trigger) and the transaction's id;
#   3. the row: `INSERT ... RETURNING *`, whose plan trigger writes its captured row to tidemark.plan_change;
#   4. the captured rows read back: ChangeSet.SQL verbatim, through tidemark.changes_of_current_transaction
#      with the server's MAC over the transaction id (signed in SQL by tidemark.sign, checked by the function);
#   5. what tidemark.record_commit does, in one statement: the MAC check of the record, the removal of an
#      expired row under the key, the idempotency row with an outcome as long as the one Tidemark stored for
#      its own commits in this run, the signed attribution message (a transactional pg_logical_emit_message
#      built and signed as record_commit builds and signs it) and the removal of the captured rows;
#   6. COMMIT.
# The logical decoding, the relay and the changelog then handle pgbench's transactions as they handle
# Tidemark's. Not mirrored: the count of captured rows before and after the change and the role check
# (Tidemark's guards against a change that hides what it does), and the reset of the session after it.
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

# JFR over the measured direct commits (PROFILE=path): started after the warm-up, as measure's
# measured run starts, by a watcher that waits for the warm-up's output
profile() {
  [[ -n "${PROFILE:-}" ]] || return 0
  jfr configure --input profile "jdk.ExecutionSample#period=2ms" --output "$work/sample.jfc" >/dev/null
  (while [[ ! -s "$work/warm.out" ]]; do sleep 0.2; done
   jcmd "$dev_pid" JFR.start name=commit settings="$work/sample.jfc" duration="${MEASURED}s" filename="$PROFILE.jfr" >/dev/null) &
}
profiled() {  # the JVM's own time by package: each sample once, by the package of its top frame
  [[ -n "${PROFILE:-}" ]] || return 0
  sleep 3
  jfr print --json --stack-depth 1 --events jdk.ExecutionSample "$PROFILE.jfr" >"$PROFILE.json"
  python3 - "$PROFILE.json" <<'PY2'
import collections, json, sys
own, total = collections.Counter(), 0
for e in json.load(open(sys.argv[1]))["recording"]["events"]:
    frames = (e["values"].get("stackTrace") or {}).get("frames") or []
    if not frames:
        continue
    parts = frames[0]["method"]["type"]["name"].replace("/", ".").split(".")
    own[".".join(parts[:3] if parts[0] in ("io", "dev", "com", "org") else parts[:2])] += 1
    total += 1
for k, n in own.most_common(15):
    print(f"[bench] profile: {k} {100 * n / total:.1f} % of {total} samples")
PY2
}

echo "[bench] $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, tidemark dev pid $dev_pid at $url, postmaster $postmaster"
echo "[bench] PostgreSQL: $pg"
# plan + commit first, so that the direct commits are measured after both warm-ups. The JVM's
# compilers still took 41 to 43 % of its CPU during direct commits, in either order (see THREADS=1):
# they send changes through dev mode's embedded Kafka broker, whose code is compiled then
run "insert_rows, plan + commit" "$work/plan.lua"
plan="$(sed -n 's/^\[bench\] calls [0-9]*, commits [0-9]*, \([0-9]*\) commits.*/\1/p' "$work/wrk.out")"
rm -f "$work/warm.out"
profile
run "insert_rows, direct commit" "$work/direct.lua"
direct="$(sed -n 's/^\[bench\] calls [0-9]*, commits [0-9]*, \([0-9]*\) commits.*/\1/p' "$work/wrk.out")"
profiled

echo "[bench] load before the unloaded direct commit: $(cut -d' ' -f1-3 /proc/loadavg)"
wrk -t 1 -c 1 --timeout "${WRK_TIMEOUT:-2s}" -d "${MEASURED}s" --latency -s "$work/direct.lua" "$url" \
  | grep '^\[bench\]' | sed 's/^\[bench\] /[bench] insert_rows, unloaded direct commit (one connection): /'

echo 'INSERT INTO public.bench_insert (v) VALUES (1);' >"$work/insert.sql"
echo "[bench] load before pgbench: $(cut -d' ' -f1-3 /proc/loadavg)"
pgbench -n -M prepared -c "$CONNECTIONS" -j 2 -T "$MEASURED" -f "$work/insert.sql" "$pg" 2>&1 \
  | grep -E '^(tps|latency)' | sed 's/^/[bench] pgbench, the same INSERT: /'

# The same work (see the header). The caller, and an outcome of the length Tidemark stored, come
# from one of its direct commits of this run.
caller="$(psql "$pg" -Atc "SELECT quote_literal(caller) FROM tidemark.idempotency WHERE plan_hash IS NULL LIMIT 1")"
outcome="$(psql "$pg" -Atc "SELECT quote_literal(outcome::text) FROM tidemark.idempotency WHERE plan_hash IS NULL LIMIT 1")"
# pgbench takes every :name as a variable, so a colon before a letter or digit (within the JSON text
# of the result) is written as JSON's escape of it, which jsonb reads back as the colon
[[ "$outcome" == E\'* ]] || { echo "[bench] unexpected outcome literal: $outcome" >&2; exit 1; }
outcome="$(sed 's/:\([A-Za-z0-9_]\)/\\\\u003a\1/g' <<<"$outcome")"
input="'$(printf 'input' | sha256sum | cut -c1-64)'"
key="('pg-' || :client_id::text || '-' || :k::text)"
# record_commit's MAC check hashes each field of the record: the caller's id and name, the key, the
# input's hash, the plan's hash and id (none for a direct commit), the tool and the outcome
hashes=""
for f in "$caller" "$caller" "$key" "$input" "''" "''" "'insert_rows'" "$outcome"; do
  hashes+="${hashes:+, }encode(sha256(convert_to($f, 'UTF8')), 'hex')"
done
# ChangeSet.SQL as Tidemark sends it, with the MAC made in SQL
changes_sql="$(sed -n '/public static final String SQL = """/,/""";/p' command-service/src/main/java/dev/tidemark/command/impl/ChangeSet.java \
  | sed '1d;$s/""";//' | sed "s/changes_of_current_transaction(\$1)/changes_of_current_transaction(split_part(tidemark.sign('changes|' || pg_current_xact_id()::text), '.', 2))/")"
[[ "$changes_sql" == *"split_part(tidemark.sign"* ]] || { echo "[bench] ChangeSet.SQL not found where expected" >&2; exit 1; }
cat >"$work/commit.sql" <<SQL
\set k random(1, 9000000000000000)
SELECT k.input_hash, k.outcome, EXISTS (SELECT 1 FROM tidemark.idempotency p WHERE p.plan_hash = NULL::text) AS plan_used
  FROM (SELECT 1) one
  LEFT JOIN tidemark.idempotency k ON k.caller = $caller AND k.key = $key AND k.created_at > now() - make_interval(hours => 24);
BEGIN;
SELECT set_config('statement_timeout', '30000', true), set_config('tidemark.identity', rpad('v1|12345|1764900000000|', 180, 'f'), true),
  set_config('tidemark.traceparent', '', true), set_config('tidemark.plan', 'on', true), pg_current_xact_id()::text;
INSERT INTO public.bench_insert (v) VALUES ((:k::bigint % 1000)::int) RETURNING *;
$changes_sql;
WITH m AS (SELECT concat_ws('|', 'record', pg_current_xact_id()::text, $hashes, '24') AS msg),
  ok AS (SELECT tidemark.mac_ok(msg, split_part(tidemark.sign(msg), '.', 2)) AS ok FROM m),
  expired AS (DELETE FROM tidemark.idempotency i WHERE i.caller = $caller AND i.key = $key
               AND i.created_at <= now() - make_interval(hours => 24) AND (SELECT ok FROM ok)),
  kept AS (INSERT INTO tidemark.idempotency (caller, key, input_hash, plan_hash, outcome)
           SELECT $caller, $key, $input, NULL, $outcome::jsonb FROM ok WHERE ok ON CONFLICT DO NOTHING RETURNING 1),
  body AS (SELECT jsonb_build_object('xid', pg_current_xact_id()::text, 'caller', $caller, 'tool', 'insert_rows',
                                     'idempotency_key', $key, 'plan_id', NULL)::text AS b),
  captured AS (DELETE FROM tidemark.plan_change c WHERE c.xid = pg_current_xact_id())
SELECT pg_logical_emit_message(true, 'tidemark.attribution', jsonb_build_object('body', b, 'mac', tidemark.sign('attribution|' || b))::text)
  FROM body, kept;
COMMIT;
SQL
pg_ticks >"$work/pg.before"
echo "[bench] load before pgbench, the same work: $(cut -d' ' -f1-3 /proc/loadavg)"
pgbench -n -M prepared -c "$CONNECTIONS" -j 2 -T "$MEASURED" -f "$work/commit.sql" "$pg" >"$work/same.out" 2>&1 \
  || { cat "$work/same.out"; exit 1; }
pg_ticks >"$work/pg.after"
grep -E '^(tps|latency|number of failed)' "$work/same.out" | sed 's/^/[bench] pgbench, the same work: /'
same="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/same.out")"
done_tx="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/same.out")"
awk -v p="$(pg_delta "$work/pg.before" "$work/pg.after")" -v n="$done_tx" -v hz="$hz" 'BEGIN {
  printf "[bench] pgbench, the same work: CPU per transaction: PostgreSQL %.3f ms\n", p * 1000 / hz / n }'
# the relay stores the attribution of a message whose signature it checked: pgbench's signed ones too
sleep 2
kept="$(psql "$pg" -Atc "SELECT count(*) FROM tidemark.idempotency WHERE key LIKE 'pg-%'")"
attributed="$(psql "$pg" -Atc "SELECT count(*) FROM tidemark.change_attribution WHERE idempotency_key LIKE 'pg-%'")"
echo "[bench] pgbench, the same work: $kept idempotency rows, $attributed attributions stored by the relay; outcome lengths (Tidemark's, pgbench's):" \
  "$(psql "$pg" -Atc "SELECT string_agg(l::text, ', ') FROM (SELECT (SELECT length(outcome::text) FROM tidemark.idempotency WHERE plan_hash IS NULL AND key NOT LIKE 'pg-%' LIMIT 1) UNION ALL SELECT (SELECT length(outcome::text) FROM tidemark.idempotency WHERE key LIKE 'pg-%' LIMIT 1)) x(l)")"
awk -v d="$direct" -v p="$plan" -v s="$same" 'BEGIN {
  printf "[bench] against the same work: direct commit %.2fx, plan + commit %.2fx\n", d / s, p / s }'
echo "[bench] load after: $(cut -d' ' -f1-3 /proc/loadavg)"
