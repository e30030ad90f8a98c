#!/usr/bin/env bash
# Benchmark, not a test: what capture costs the host database's writers, and how fast the relay
# drains a backlog into Kafka (docs/performance.md#capture). Starts its own PostgreSQL from the
# Debian binaries with fsync and synchronous_commit on and wal_level = logical, and Tidemark against
# it with `tidemark dev --database-url` (embedded Kafka, every role in one process).
#
#   1. single-row INSERTs (pgbench -M prepared) into a captured table and into an uncaptured twin,
#      side by side, at 16 and 64 clients, Tidemark running;
#   2. captured INSERTs and UPDATEs with Tidemark running, against the same statements on the
#      uncaptured twins with Tidemark stopped;
#   2b. the same statements on captured and uncaptured tables with Tidemark stopped: the cost on
#      the writers' own path (publication, REPLICA IDENTITY FULL, the plan trigger's WHEN), without
#      the CPU that decoding takes from them on a small machine;
#   3. the relay's drain rate: DRAIN changes committed while Tidemark is stopped, then the time from
#      its start to the last of them being on the topic.
#
# Usage: bench/capture-bench.sh            (SECONDS_EACH=20 DRAIN=200000 BUILD=1 PARTS=123 WARMUP=20 by default;
#        PARTS=3 runs the drain alone, PARTS=12 the writers' runs alone)
#        PIN=1 gives each side a core of its own, as when Tidemark runs on other machines than the
#        database: PostgreSQL and pgbench on CPU 0, Tidemark's JVM (decoder, relay, broker) on CPU 1.
#        Then the writers' figures show what capture costs the database server alone: the walsender's
#        decoding, the stores into tidemark.changelog and the relay's reads of them.
# Every part that runs with Tidemark first commits captured INSERTs for WARMUP seconds, not counted,
# so that the JVM's compilers have finished with the capture path before anything is measured.
# JAVA_OPTS goes to Tidemark's JVM; TIDEMARK_* variables (docs/configuration.md) to its config.
# Needs: root (to run PostgreSQL as user postgres), /usr/lib/postgresql/<v>/bin, node/target/tidemark.jar.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
SECONDS_EACH=${SECONDS_EACH:-20}
DRAIN=${DRAIN:-200000}
PARTS=${PARTS:-123}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
PORT=${PORT:-55439}
WARMUP=${WARMUP:-20}
PIN=${PIN:-0}
DB_CPUS=() TM_CPUS=()
if [ "$PIN" = 1 ]; then
  DB_CPUS=(taskset -c 0) TM_CPUS=(taskset -c 1)
fi
WORK=$(mktemp -d /tmp/tidemark-capture-bench.XXXXXX)
chown postgres "$WORK"
PSQL=("$PGBIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d bench -v ON_ERROR_STOP=1)
TIDEMARK_PID=

if [ "${BUILD:-1}" = 1 ]; then
  ./mvnw -o -q -B -pl node -am package -DskipTests
fi

cleanup() {
  stop_tidemark
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }

start_tidemark() {
  "${TM_CPUS[@]}" java ${JAVA_OPTS:-} -Djava.io.tmpdir="$WORK" -jar "$REPO/node/target/tidemark.jar" dev \
    --database-url "postgresql://postgres@127.0.0.1:$PORT/bench" --http-port 0 --ops-port 0 --cluster-port 57810 \
    >"$WORK/tidemark.log" 2>&1 &
  TIDEMARK_PID=$!
  for _ in $(seq 1 240); do
    grep -q '^Tidemark ready' "$WORK/tidemark.log" && return 0
    kill -0 "$TIDEMARK_PID" 2>/dev/null || { cat "$WORK/tidemark.log"; exit 1; }
    sleep 0.5
  done
  echo "Tidemark did not start"; cat "$WORK/tidemark.log"; exit 1
}

stop_tidemark() {
  if [ -n "$TIDEMARK_PID" ]; then
    kill "$TIDEMARK_PID" 2>/dev/null || true
    wait "$TIDEMARK_PID" 2>/dev/null || true
    TIDEMARK_PID=
  fi
}

# pgbench's TPS (without connection time) for script $1 at $2 clients
tps() {
  "${DB_CPUS[@]}" "$PGBIN/pgbench" -n -M prepared -h 127.0.0.1 -p "$PORT" -U postgres -c "$2" -j 2 -T "${3:-$SECONDS_EACH}" -f "$1" bench 2>/dev/null \
    | awk '/^tps/ {print int($3)}'
}

# CPU ticks of the PostgreSQL server so far: the postmaster, its live children, and the children it
# has reaped (pgbench's backends end with each run)
pg_ticks() {
  local pm t=0 pid f
  pm=$(head -1 "$WORK/data/postmaster.pid")
  f=($(sed 's/^.*) //' "/proc/$pm/stat"))
  t=$(( f[11] + f[12] + f[13] + f[14] ))
  for pid in $(pgrep -P "$pm"); do
    f=($(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null)) || continue
    t=$(( t + f[11] + f[12] ))
  done
  echo "$t"
}
# CPU ticks so far of the server processes that serve Tidemark's capture: the walsender that decodes
# the slot, and the relay's connections that store and read the changelog
capture_ticks() {
  local t=0 pid f
  for pid in $("${PSQL[@]}" -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'tidemark-relay'"); do
    f=($(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null)) || continue
    t=$(( t + f[11] + f[12] ))
  done
  echo "$t"
}
# Waits until Tidemark has decoded, stored and published every change committed so far, so that
# the backlog of one measured run is not drained during the next one
settled() {
  local fence
  fence=$("${PSQL[@]}" -At -c "SELECT (pg_logical_emit_message(false, 'tidemark.fence', '') - '0/0')::bigint")
  until [ "$("${PSQL[@]}" -At -c "SELECT decoded_lsn >= $fence AND (published_commit, published_change) >= coalesce((SELECT (k.position, c.id) FROM tidemark.changelog_commit k JOIN tidemark.changelog c ON c.xid = k.xid ORDER BY k.position DESC, c.id DESC LIMIT 1), (0, 0)) FROM tidemark.changelog_state")" = t ]; do
    sleep 0.2
  done
}
warm_up() {
  [ "$WARMUP" -gt 0 ] && tps "$WORK/insert-captured.sql" 16 "$WARMUP" >/dev/null
  settled
}

runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/data" -A trust -U postgres >/dev/null
runuser -u postgres -- "${DB_CPUS[@]}" "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w -o "-c listen_addresses=127.0.0.1 -c port=$PORT \
  -c unix_socket_directories=$WORK -c fsync=on -c synchronous_commit=on -c wal_level=logical -c max_replication_slots=10 \
  -c max_wal_senders=10 -c max_connections=200 -c shared_buffers=256MB -c max_wal_size=4GB" start >/dev/null
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -c "CREATE DATABASE bench"
"${PSQL[@]}" <<'SQL'
CREATE TABLE public.captured (id bigserial PRIMARY KEY, v int NOT NULL, note text NOT NULL);
CREATE TABLE public.items (id int PRIMARY KEY, v int NOT NULL, note text NOT NULL);
INSERT INTO public.items SELECT g, 0, 'item ' || g FROM generate_series(1, 10000) g;
CREATE SCHEMA uncaptured;
CREATE TABLE uncaptured.captured (LIKE public.captured INCLUDING ALL);
CREATE TABLE uncaptured.items (LIKE public.items INCLUDING ALL);
INSERT INTO uncaptured.items SELECT * FROM public.items;
SQL
cat >"$WORK/insert-captured.sql" <<'SQL'
\set v random(1, 1000000)
INSERT INTO public.captured (v, note) VALUES (:v, 'a row of about forty bytes of text, here');
SQL
sed 's/public\./uncaptured./' "$WORK/insert-captured.sql" >"$WORK/insert-uncaptured.sql"
cat >"$WORK/update-captured.sql" <<'SQL'
\set id random(1, 10000)
UPDATE public.items SET v = v + 1 WHERE id = :id;
SQL
sed 's/public\./uncaptured./' "$WORK/update-captured.sql" >"$WORK/update-uncaptured.sql"

echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), fsync=on, synchronous_commit=on, wal_level=logical; ${SECONDS_EACH}s per run; $(nproc) cores$([ "$PIN" = 1 ] && echo "; pinned: PostgreSQL and pgbench on CPU 0, Tidemark on CPU 1")"
start_tidemark
[[ $PARTS == *1* || $PARTS == *2* ]] && warm_up
"${PSQL[@]}" -At -c "SELECT 'capture: ' || count(*) FILTER (WHERE published) || ' table(s) published, replica identity ' || string_agg(DISTINCT c.relreplident::text, ',') FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid"

if [[ $PARTS == *1* || $PARTS == *2* ]]; then
echo "## 1. single-row INSERT, captured vs uncaptured twin, Tidemark running"
for clients in 16 64; do
  u=$(tps "$WORK/insert-uncaptured.sql" "$clients"); lu=$(load)
  c=$(tps "$WORK/insert-captured.sql" "$clients"); lc=$(load)
  settled
  echo "clients=$clients uncaptured=$u TPS (load $lu) captured=$c TPS (load $lc) ratio=$(awk "BEGIN {printf \"%.1f\", 100*$c/$u}")%"
done

echo "## 2. captured with Tidemark running vs uncaptured with Tidemark stopped, 16 clients"
p0=$(pg_ticks); c0=$(capture_ticks)
ci=$(tps "$WORK/insert-captured.sql" 16); lci=$(load)
settled
p1=$(pg_ticks); c1=$(capture_ticks)
cu=$(tps "$WORK/update-captured.sql" 16); lcu=$(load)
settled
p2=$(pg_ticks); c2=$(capture_ticks)
hz=$(getconf CLK_TCK)
share() { awk "BEGIN {printf \"%.1f %% of the server's CPU, %.1f µs per captured change\", 100*$1/$2, 1e6*$1/$hz/$3}"; }
echo "PostgreSQL CPU for capture (walsender, stores, relay reads) during captured INSERTs: $(share $((c1 - c0)) $((p1 - p0)) $((ci * SECONDS_EACH)))"
echo "PostgreSQL CPU for capture during captured UPDATEs: $(share $((c2 - c1)) $((p2 - p1)) $((cu * SECONDS_EACH)))"
stop_tidemark
ui=$(tps "$WORK/insert-uncaptured.sql" 16); lui=$(load)
uu=$(tps "$WORK/update-uncaptured.sql" 16); luu=$(load)
echo "INSERT captured+running=$ci TPS (load $lci) uncaptured+stopped=$ui TPS (load $lui) ratio=$(awk "BEGIN {printf \"%.1f\", 100*$ci/$ui}")%"
echo "UPDATE captured+running=$cu TPS (load $lcu) uncaptured+stopped=$uu TPS (load $luu) ratio=$(awk "BEGIN {printf \"%.1f\", 100*$cu/$uu}")%"

echo "## 2b. the writers' own path, Tidemark stopped (no decoding): captured (publication, REPLICA IDENTITY FULL, plan trigger) vs twin"
for clients in 16 64; do
  u=$(tps "$WORK/insert-uncaptured.sql" "$clients"); lu=$(load)
  c=$(tps "$WORK/insert-captured.sql" "$clients"); lc=$(load)
  echo "INSERT clients=$clients uncaptured=$u TPS (load $lu) captured=$c TPS (load $lc) ratio=$(awk "BEGIN {printf \"%.1f\", 100*$c/$u}")%"
done
u=$(tps "$WORK/update-uncaptured.sql" 16); lu=$(load)
c=$(tps "$WORK/update-captured.sql" 16); lc=$(load)
echo "UPDATE clients=16 uncaptured=$u TPS (load $lu) captured=$c TPS (load $lc) ratio=$(awk "BEGIN {printf \"%.1f\", 100*$c/$u}")%"
else
  stop_tidemark
fi

[[ $PARTS == *3* ]] || exit 0
echo "## 3. relay drain rate: $DRAIN more changes committed while Tidemark is stopped (with what the runs above left in the slot)"
for _ in $(seq 1 $((DRAIN / 10000))); do
  "${PSQL[@]}" -c "INSERT INTO public.captured (v, note) SELECT g, 'drained row ' || g FROM generate_series(1, 10000) g"
done
before=$("${PSQL[@]}" -At -c "SELECT count(*) FROM tidemark.changelog")
t0=$(date +%s.%N)
start_tidemark
t1=$(date +%s.%N)
settled
t2=$(date +%s.%N)
drained=$(( $("${PSQL[@]}" -At -c "SELECT count(*) FROM tidemark.changelog") - before ))
echo "drained $drained changes: $(awk "BEGIN {printf \"%.1f\", $t2-$t1}") s after the node was ready ($(awk "BEGIN {printf \"%.1f\", $t2-$t0}") s after it was started): $(awk "BEGIN {printf \"%d\", $drained/($t2-$t1)}") changes/s decoded, stored and published to Kafka (load $(load))"

# The drain above starts a new JVM, whose compiler takes a third of its CPU during those seconds.
# The same node again, now warm: DRAIN changes committed in one transaction while it runs (logical
# decoding hands a transaction over only once it committed, so they arrive as one backlog).
echo "## 3b. warm drain: the same node, $DRAIN changes committed in one transaction while it runs"
before=$("${PSQL[@]}" -At -c "SELECT count(*) FROM tidemark.changelog")
"${PSQL[@]}" -c "INSERT INTO public.captured (v, note) SELECT g, 'warm row ' || g FROM generate_series(1, $DRAIN) g"
t1=$(date +%s.%N)
fence=$("${PSQL[@]}" -At -c "SELECT (pg_logical_emit_message(false, 'tidemark.fence', '') - '0/0')::bigint")
stored_at=
while :; do
  state=$("${PSQL[@]}" -At -F ' ' -c "SELECT decoded_lsn >= $fence, (published_commit, published_change) >= (SELECT k.position, c.id FROM tidemark.changelog_commit k JOIN tidemark.changelog c ON c.xid = k.xid ORDER BY k.position DESC, c.id DESC LIMIT 1) FROM tidemark.changelog_state")
  [ -z "$stored_at" ] && [ "${state% *}" = t ] && stored_at=$(date +%s.%N)
  [ "$state" = "t t" ] && break
  sleep 0.2
done
t2=$(date +%s.%N)
echo "decoded and stored $(awk "BEGIN {printf \"%.1f\", $stored_at-$t1}") s after their commit"
drained=$(( $("${PSQL[@]}" -At -c "SELECT count(*) FROM tidemark.changelog") - before ))
echo "drained $drained changes: $(awk "BEGIN {printf \"%.1f\", $t2-$t1}") s after their commit: $(awk "BEGIN {printf \"%d\", $drained/($t2-$t1)}") changes/s decoded, stored and published to Kafka (load $(load))"
