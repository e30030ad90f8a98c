#!/usr/bin/env bash
# Benchmark, not a test: what Tidemark's capture costs the served database's server, beside the
# floor that logical decoding alone sets, in one run (docs/performance.md#what-capture-costs-the-writers).
#
# Starts two PostgreSQL servers from the Debian binaries (fsync and synchronous_commit on,
# wal_level = logical): "served", pinned to CPU 0 with pgbench, and "store", pinned to CPU 1 with
# everything that reads the served one's changes (Tidemark's JVM with the embedded broker of dev
# mode, or pg_recvlogical). The served database has a table `cap` for INSERTs and `items` (10,000
# rows) for UPDATEs. The same single-row writes (pgbench -M prepared, SECONDS_EACH seconds, at each
# of CLIENT_COUNTS clients) are measured with each reader in turn:
#   - no reader:        no replication slot at all;
#   - pg_recvlogical:   a pgoutput slot of a publication of both tables (REPLICA IDENTITY FULL, as
#                       Tidemark publishes them), streamed to /dev/null: bare decoding;
#   - Tidemark:         `tidemark dev --database-url` with database.changelog-url naming a database
#                       on the store server, so the served server only decodes;
#   - Tidemark in place (IN_PLACE=1): the same on a second served database, twin of the first,
#                       with no changelog-url, so the changelog is stored in the served database.
# UNPLANNED=cap,items gives both Tidemark cases database.unplanned-tables: the tables carry no plan
# trigger, as an operator chooses for tables that change tools never change.
# ROUNDS rounds, each on databases of its own: odd rounds take the readers in the order above, even
# rounds in the reverse order.
# Each Tidemark first captures WARMUP seconds of INSERTs at 16 clients, not counted, so that its
# JVM has compiled the capture path. After each run the script waits until every slot of the
# database has been confirmed past a marker committed after the run (and, with Tidemark, until
# all that was stored is published), and only then reads the served server's CPU: every process of
# it, those that ended included, so a run's figure includes the decoding of all it committed.
# Beside it: the walsender's CPU, that of the served server's sessions other than pgbench's (with
# Tidemark, its pools and its relay's queries) and the load average before and after each run;
# at the end, per case, Tidemark's ratios to bare decoding and what each reader adds over no reader.
#
# Usage: bench/capture-floor.sh   (ROUNDS=2 SECONDS_EACH=20 WARMUP=20 CLIENT_COUNTS="16 64" IN_PLACE=1 UNPLANNED=
#        PORT=55451 STORE_PORT=55452 JAR=node/target/tidemark.jar; JAVA_OPTS goes to Tidemark's JVM)
# Needs: what bench/pg-common.sh needs, pgbench and pg_recvlogical, java, and the jar built with
# ./mvnw -B -o -q -pl node -am package -DskipTests.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${SECONDS_EACH:-20}
WARMUP=${WARMUP:-20}
CLIENT_COUNTS=${CLIENT_COUNTS:-16 64}
IN_PLACE=${IN_PLACE:-1}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-55451}
STORE_PORT=${STORE_PORT:-55452}
JAR=${JAR:-node/target/tidemark.jar}
[ -r "$JAR" ] || { echo "no jar at $JAR: build it with ./mvnw -B -o -q -pl node -am package -DskipTests, or set JAR" >&2; exit 1; }
WORK=$(mktemp -d /tmp/tidemark-capture-floor.XXXXXX)
chown postgres "$WORK"
. bench/pg-common.sh
cleanup() {
  stop_reader
  pg_stop served
  pg_stop store
  rm -rf "$WORK"
}
trap cleanup EXIT

q() {  # q PORT DB SQL: one statement, its result unaligned
  "$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$1" -U postgres -d "$2" -v ON_ERROR_STOP=1 -c "$3"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

pg_start served "$PORT" 0
pg_start store "$STORE_PORT" 1
# each round has databases of its own, so that each Tidemark starts on a database it never saw
for round in $(seq 1 "$ROUNDS"); do
  q "$STORE_PORT" postgres "CREATE DATABASE changelog$round"
  for db in bench$round inplace$round; do
    q "$PORT" postgres "CREATE DATABASE $db"
    q "$PORT" "$db" "CREATE TABLE cap (id bigserial PRIMARY KEY, v int NOT NULL, note text NOT NULL);
      CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL, note text NOT NULL);
      INSERT INTO items SELECT g, 0, 'item ' || g FROM generate_series(1, 10000) g"
  done
  q "$PORT" "bench$round" "ALTER TABLE cap REPLICA IDENTITY FULL; ALTER TABLE items REPLICA IDENTITY FULL;
    CREATE PUBLICATION floor_pub FOR TABLE cap, items"
done
printf '%s\n' '\set v random(1, 1000000)' "INSERT INTO cap (v, note) VALUES (:v, 'a row of about forty bytes of text, here');" \
  >"$WORK/insert.sql"
printf '%s\n' '\set id random(1, 10000)' 'UPDATE items SET v = v + 1 WHERE id = :id;' >"$WORK/update.sql"

# pgbench of $1 (insert or update) at $2 clients on database $3, $4 seconds; prints its TPS and
# the transactions it made
pgbench_run() {
  local out
  out=$(taskset -c 0 "$PGBIN/pgbench" -n -M prepared -h 127.0.0.1 -p "$PORT" -U postgres -c "$2" -j 2 -T "$4" -f "$WORK/$1.sql" "$3" \
    2>"$WORK/pgbench.err") || { cat "$WORK/pgbench.err" >&2; exit 1; }
  awk '/^number of transactions actually processed/ { n = $NF } /^tps = / { t = $3 } END { if (n == 0) exit 1; printf "%.0f %d\n", t, n }' <<<"$out"
}
# until Tidemark has published all it stored in the changelog's database ($1 = port, $2 = database)
published() {
  until [ "$(q "$1" "$2" "SELECT (published_commit, published_change) >= coalesce((SELECT (k.position, c.id)
      FROM tidemark.changelog_commit k JOIN tidemark.changelog c ON c.xid = k.xid ORDER BY k.position DESC, c.id DESC LIMIT 1), (0, 0))
      FROM tidemark.changelog_state")" = t ]; do
    sleep 0.2
  done
}

# CPU ticks so far of the served server's client sessions other than pgbench's: with Tidemark, its
# pools' and its relay's queries (a session that ended is left out; the whole server's figure has it)
sessions_ticks() {
  local pid t=0
  for pid in $(q "$PORT" postgres "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'
      AND application_name <> 'pgbench' AND pid <> pg_backend_pid()"); do
    t=$((t + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}

declare -A TPS CPU
# measure NAME DB APPLICATION [STORE_PORT STORE_DB]: every case with the reader now running; a
# Tidemark reader names where its changelog is stored
measure() {
  local op clients s0 s1 w0 w1 o0 o1 l0 r
  for op in insert update; do
    for clients in $CLIENT_COUNTS; do
      l0=$(load)
      s0=$(server_ticks served); w0=$(walsender_ticks "$PORT" "$2" "$3"); o0=$(sessions_ticks)
      r=$(pgbench_run "$op" "$clients" "$2" "$SECONDS_EACH")
      caught_up "$PORT" "$2" cap
      [ $# -gt 3 ] && published "$4" "$5"
      s1=$(server_ticks served); w1=$(walsender_ticks "$PORT" "$2" "$3"); o1=$(sessions_ticks)
      TPS[$1,$ROUND,$op,$clients]=${r% *}
      CPU[$1,$ROUND,$op,$clients]=$(awk -v s="$((s1 - s0))" -v hz="$HZ" -v n="${r#* }" 'BEGIN { printf "%.1f", s * 1e6 / hz / n }')
      awk -v c="$op $clients" -v m="$1" -v t="${r% *}" -v cpu="${CPU[$1,$ROUND,$op,$clients]}" -v w="$((w1 - w0))" -v o="$((o1 - o0))" -v hz="$HZ" \
        -v n="${r#* }" -v l="$l0 → $(load)" -v r="$ROUND" 'BEGIN { printf "| %s | %s | %s | %d | %s | %.1f | %.1f | %s |\n", r, c, m, t, cpu, w * 1e6 / hz / n, o * 1e6 / hz / n, l }'
    done
  done
}

TIDEMARK=
# start_tidemark DB [CHANGELOG_URL]: Tidemark in dev mode on the served database DB, pinned to CPU 1,
# storing its changelog at CHANGELOG_URL (in DB itself without one); returns once it captures
start_tidemark() {
  local envs=(env -u TIDEMARK_DATABASE_CHANGELOG_URL "TIDEMARK_DATABASE_UNPLANNED_TABLES=${UNPLANNED:-}")
  [ -n "${2:-}" ] && envs=(env "TIDEMARK_DATABASE_CHANGELOG_URL=$2" "TIDEMARK_DATABASE_UNPLANNED_TABLES=${UNPLANNED:-}")
  "${envs[@]}" taskset -c 1 java ${JAVA_OPTS:-} -Djava.io.tmpdir="$WORK" -jar "$JAR" dev \
    --database-url "postgresql://postgres@127.0.0.1:$PORT/$1" --http-port 0 --ops-port 0 --cluster-port 57830 \
    >"$WORK/tidemark-$1.log" 2>&1 &
  READER=$!
  for _ in $(seq 1 480); do
    [ "$(q "$PORT" "$1" "SELECT count(*) FROM pg_replication_slots WHERE database = current_database() AND active")" = 1 ] \
      && grep -q '^Tidemark ready' "$WORK/tidemark-$1.log" && return 0
    kill -0 "$READER" 2>/dev/null || { cat "$WORK/tidemark-$1.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "Tidemark did not start" >&2; cat "$WORK/tidemark-$1.log" >&2; exit 1
}
# until the only slot of DB is free, then drops it, so that no slot holds WAL for the runs after
drop_slots() {
  for _ in $(seq 1 40); do
    q "$PORT" "$1" "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database() AND NOT active" >/dev/null
    [ "$(q "$PORT" "$1" "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")" = 0 ] && return
    sleep 0.25
  done
  echo "a slot of $1 stayed active" >&2; exit 1
}

echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), fsync=on, synchronous_commit=on, wal_level=logical;" \
  "${SECONDS_EACH}s per run; served server and pgbench on CPU 0; the store server, Tidemark's JVM and pg_recvlogical on CPU 1;" \
  "jar $JAR of $(date -u -r "$JAR" +%FT%TZ); database.unplanned-tables '${UNPLANNED:-}'; started $(date -u +%FT%TZ), load $(load)"
echo "| round | case | reader | writers' TPS | served server's CPU per change (µs) | its walsender's (µs) | its other sessions' but pgbench's (µs) | load before → after |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"

no_reader() { measure "no reader" "bench$ROUND" none; }
bare_decoding() {
  q "$PORT" "bench$ROUND" "SELECT pg_create_logical_replication_slot('floor', 'pgoutput')" >/dev/null
  taskset -c 1 "$PGBIN/pg_recvlogical" -h 127.0.0.1 -p "$PORT" -U postgres -d "bench$ROUND" -S floor --start -o proto_version=1 \
    -o publication_names=floor_pub -f /dev/null -s 1 -F 1 &
  READER=$!
  sleep 1
  measure "pg_recvlogical" "bench$ROUND" pg_recvlogical
  stop_reader
  drop_slots "bench$ROUND"
}
# tidemark DB STORE_PORT STORE_DB NAME [CHANGELOG_URL]: warm-up, then every case, with Tidemark on DB
tidemark() {
  start_tidemark "$1" "${5:-}"
  pgbench_run insert 16 "$1" "$WARMUP" >/dev/null
  caught_up "$PORT" "$1" cap
  published "$2" "$3"
  measure "$4" "$1" tidemark-relay "$2" "$3"
  echo "# $4: changelog rows $(q "$PORT" "$1" "SELECT count(*) FROM tidemark.changelog") in the served database," \
    "$(q "$2" "$3" "SELECT count(*) FROM tidemark.changelog") where it is stored; captured tables' replica identity" \
    "$(q "$PORT" "$1" "SELECT string_agg(DISTINCT relreplident::text, ',') FROM pg_class WHERE oid IN ('cap'::regclass, 'items'::regclass)")"
  stop_reader
  drop_slots "$1"
}
separate_store() { tidemark "bench$ROUND" "$STORE_PORT" "changelog$ROUND" Tidemark "postgresql://127.0.0.1:$STORE_PORT/changelog$ROUND"; }
in_place() { [ "$IN_PLACE" != 1 ] || tidemark "inplace$ROUND" "$PORT" "inplace$ROUND" "Tidemark in place"; }

# odd rounds go from no reader to Tidemark, even ones back, so that a drift of the machine's speed
# over a round does not fall on one reader only
for ROUND in $(seq 1 "$ROUNDS"); do
  if [ $((ROUND % 2)) = 1 ]; then
    no_reader; bare_decoding; separate_store; in_place
  else
    in_place; separate_store; bare_decoding; no_reader
  fi
done
echo "# ended $(date -u +%FT%TZ), load $(load)"

echo
echo "| round | case | server CPU per change, Tidemark / bare decoding (target ≤ 1.15) | writers' TPS, Tidemark / bare decoding (target ≥ 0.9) |" \
  "added over no reader, µs per change: pg_recvlogical / Tidemark$([ "$IN_PLACE" = 1 ] && echo " / Tidemark in place") |" \
  "$([ "$IN_PLACE" = 1 ] && echo "Tidemark in place: CPU / bare, TPS / bare |")"
echo "| --- | --- | --- | --- | --- |$([ "$IN_PLACE" = 1 ] && echo " --- |")"
for ROUND in $(seq 1 "$ROUNDS"); do
  for op in insert update; do
    for clients in $CLIENT_COUNTS; do
      k="$ROUND,$op,$clients"
      awk -v r="$ROUND" -v c="$op $clients" -v inplace="$IN_PLACE" -v n0="${CPU[no reader,$k]}" -v f="${CPU[pg_recvlogical,$k]}" \
        -v t="${CPU[Tidemark,$k]}" -v ft="${TPS[pg_recvlogical,$k]}" -v tt="${TPS[Tidemark,$k]}" -v p="${CPU[Tidemark in place,$k]:-0}" \
        -v pt="${TPS[Tidemark in place,$k]:-0}" 'BEGIN {
          printf "| %s | %s | %.2f | %.2f | %.1f / %.1f", r, c, t / f, tt / ft, f - n0, t - n0
          if (inplace == 1) printf " / %.1f | %.2f, %.2f |\n", p - n0, p / f, pt / ft; else printf " |\n" }'
    done
  done
done
