# Sourced by the benchmarks that run against `tidemark dev`: starts it (JAR=path for another build)
# on free ports, waits until it printed its endpoint, and stops it when the script exits. Sets
# dev_pid, url, token, pg (its PostgreSQL URL) and log (its output). DEV_ARGS adds flags to
# `tidemark dev` (--database-url URL --demo serves your own PostgreSQL), JAVA_OPTS to its JVM.
# a benchmark drives one token: with a caller's share of its role's pool (half by default) it would
# measure half the pool, so unless the run sets it, one caller may take all of it
export TIDEMARK_DATABASE_CALLER_SHARE_PERCENT="${TIDEMARK_DATABASE_CALLER_SHARE_PERCENT:-100}"
work="$(mktemp -d)"
log="$work/dev.log"
cluster_port=$((20000 + RANDOM % 20000))
java ${JAVA_OPTS:-} -jar "${JAR:-node/target/tidemark.jar}" dev ${DEV_ARGS:-} --http-port 0 --ops-port 0 --cluster-port "$cluster_port" >"$log" 2>&1 &
dev_pid=$!
cleanup() {
  kill "$dev_pid" 2>/dev/null || true
  wait "$dev_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1 240); do
  grep -q '^PostgreSQL: ' "$log" && break
  kill -0 "$dev_pid" 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.5
done
url="$(sed -n 's/^Tidemark ready: //p' "$log")"
token="$(sed -n 's/^Token: //p' "$log")"
pg="$(sed -n 's/^PostgreSQL: //p' "$log")"
[[ -n "$url" && -n "$token" && -n "$pg" ]] || { cat "$log"; exit 1; }
