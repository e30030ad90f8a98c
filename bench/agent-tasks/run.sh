#!/usr/bin/env bash
# Runs the agent task benchmark: starts Tidemark's dev mode on the given ports, points DBHub and
# MCP Toolbox at the same embedded PostgreSQL, runs tasks.mjs and prints one table per task: calls,
# and the tokens of the text content and of structuredContent, each counted alone.
# Usage: bench/agent-tasks/run.sh [http-port] [ops-port] [cluster-port]   (BUILD=0 reuses the jar)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
http_port="${1:-18431}" ops_port="${2:-18432}" cluster_port="${3:-18433}"

if [[ "${BUILD:-1}" != 0 ]]; then (cd "$root" && ./mvnw -B -q -DskipTests package); fi
# npm install takes the versions package-lock.json pins, the servers' binaries included; npm ci
# refuses this lock file, which leaves out MCP Toolbox's binaries for other platforms
[[ -d "$here/node_modules" ]] || (cd "$here" && npm install --no-audit --no-fund)

work="$(mktemp -d)"
java -Xmx768m -Djava.io.tmpdir="$work" -jar "$root/node/target/tidemark.jar" dev \
  --http-port "$http_port" --ops-port "$ops_port" --cluster-port "$cluster_port" >"$work/out" 2>"$work/err" &
dev=$!
trap 'kill "$dev" 2>/dev/null; wait "$dev" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 240); do grep -q '^Started in' "$work/out" && break; sleep 0.5; done
grep -q '^Started in' "$work/out" || { cat "$work/err" >&2; echo "dev mode did not start" >&2; exit 1; }
url="$(sed -n 's/^Tidemark ready: //p' "$work/out")"
token="$(sed -n 's/^Token: //p' "$work/out")"
pg="$(sed -n 's/^PostgreSQL: //p' "$work/out")"

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
DUMP="${DUMP:-}" node "$here/tasks.mjs" "$url" "$token" "$pg" "${SERVERS:-tidemark,dbhub,toolbox}" >"$work/result.json"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const names = { tidemark: "Tidemark", dbhub: "DBHub", toolbox: "MCP Toolbox" };
const titles = { schema: "(a) learn the schema", find: "(b) find a row by a fuzzy condition",
  change: "(c) delete a customer with orders (cascade, consent)", follow: "(d) what changed since a point" };
console.log("\n| server | tools | tools/list tokens |\n| --- | --- | --- |");
for (const [s, v] of Object.entries(r)) console.log(`| ${names[s]} | ${v.tools} | ${v.tools_list_tokens.toLocaleString("en")} |`);
// a server without structuredContent has its host show the text: that is its figure in both columns
const n = (x) => x.toLocaleString("en");
for (const t of Object.keys(titles)) {
  console.log(`\n${titles[t]}\n\n| server | calls | text tokens | structuredContent tokens |\n| --- | --- | --- | --- |`);
  for (const [s, v] of Object.entries(r)) {
    const k = v.tasks[t];
    console.log(`| ${names[s]} | ${k.calls} | ${n(k.text)} | ${k.structured == null ? `none (its text: ${n(k.text)})` : n(k.structured)} |`);
  }
}' "$work/result.json"
