#!/usr/bin/env bash
# Benchmark, not a test: what PostgreSQL's logical decoding alone costs the writers of a database,
# with no Tidemark at all (docs/performance.md#the-floor-that-logical-decoding-sets). It tells how
# much of capture's cost on the writers (bench/capture-bench.sh) is decoding itself, which no
# consumer can avoid, and how much is Tidemark's own work on the database server.
#
# Starts its own PostgreSQL from the Debian binaries (fsync and synchronous_commit on,
# wal_level = logical), pinned to CPU 0 with pgbench, so that decoding competes with the writers
# for the server's core as it does on a busy database server. Then, ROUNDS times, single-row
# INSERTs (pgbench -M prepared, CLIENTS clients, SECONDS_EACH seconds) into a table `cap` in a
# publication (REPLICA IDENTITY FULL, as Tidemark publishes it) and into an unpublished twin:
#   - no slot:    no replication slot at all, the writers' own rate;
#   - streaming:  a pgoutput slot read by pg_recvlogical on CPU 1, which writes what it gets to
#                 /dev/null: the walsender decodes each transaction as it commits;
#   - polled:     the same slot read every POLL seconds with pg_logical_slot_get_binary_changes,
#                 from CPU 1: a backend decodes what has accumulated, in one go.
# Each run also prints the server's CPU per transaction (every PostgreSQL process, those that ended
# included) and the walsender's, from /proc: the cost of decoding without the noise of the TPS.
#
# Usage: bench/decoding-floor.sh        (ROUNDS=3 CLIENTS=16 SECONDS_EACH=20 POLL=0.1 PORT=55441)
# Needs: root (to run PostgreSQL as user postgres), /usr/lib/postgresql/<v>/bin with pg_recvlogical.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-16}
SECONDS_EACH=${SECONDS_EACH:-20}
POLL=${POLL:-0.1}
PORT=${PORT:-55441}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
WORK=$(mktemp -d /tmp/tidemark-decoding-floor.XXXXXX)
chown postgres "$WORK"
CONN=(-h 127.0.0.1 -p "$PORT" -U postgres)
PSQL=("$PGBIN/psql" -X -q -At "${CONN[@]}" -d bench -v ON_ERROR_STOP=1)
CONSUMER=

cleanup() {
  [ -n "$CONSUMER" ] && kill "$CONSUMER" 2>/dev/null && wait "$CONSUMER" 2>/dev/null
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/data" -A trust -U postgres >/dev/null
runuser -u postgres -- taskset -c 0 "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w -o "-c listen_addresses=127.0.0.1 \
  -c port=$PORT -c unix_socket_directories=$WORK -c fsync=on -c synchronous_commit=on -c wal_level=logical \
  -c max_connections=200 -c shared_buffers=256MB -c max_wal_size=4GB" start >/dev/null
"$PGBIN/psql" -X -q "${CONN[@]}" -c "CREATE DATABASE bench"
"${PSQL[@]}" <<'SQL'
CREATE TABLE cap (id bigserial PRIMARY KEY, v int NOT NULL, note text NOT NULL);
CREATE TABLE twin (LIKE cap INCLUDING ALL);
ALTER TABLE cap REPLICA IDENTITY FULL;
CREATE PUBLICATION floor_pub FOR TABLE cap;
SQL
for t in cap twin; do
  printf '%s\n' '\set v random(1, 1000000)' "INSERT INTO $t (v, note) VALUES (:v, 'a row of about forty bytes of text, here');" \
    >"$WORK/$t.sql"
done

HZ=$(getconf CLK_TCK)
# CPU ticks of the whole server: the postmaster, its live children, and the children it reaped
server_ticks() {
  local pm
  pm=$(head -1 "$WORK/data/postmaster.pid")
  cat "/proc/$pm/stat" $(pgrep -P "$pm" | sed 's|.*|/proc/&/stat|') 2>/dev/null | awk '{ t += $14 + $15 + $16 + $17 } END { print t }'
}
walsender_ticks() {
  local pid
  pid=$("${PSQL[@]}" -c "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'floor'")
  [ -n "$pid" ] && awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0
}
# pgbench on $1's table; prints its TPS and, after a space, the server's CPU per transaction in µs
# and the walsender's (0 without one)
tps() {
  local s0 s1 w0 w1 out
  s0=$(server_ticks); w0=$(walsender_ticks)
  out=$(taskset -c 0 "$PGBIN/pgbench" -n -M prepared "${CONN[@]}" -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -f "$WORK/$1.sql" bench 2>/dev/null)
  s1=$(server_ticks); w1=$(walsender_ticks)
  awk -v s="$((s1 - s0))" -v w="$((w1 - w0))" -v hz="$HZ" '
    /^number of transactions actually processed/ { n = $NF }
    /^tps = / { t = $3 }
    END { printf "%.0f %.1f %.1f\n", t, s * 1e6 / hz / n, w * 1e6 / hz / n }' <<<"$out"
}
slot_gone() {
  for _ in $(seq 1 40); do
    "${PSQL[@]}" -c "SELECT pg_drop_replication_slot('floor') FROM pg_replication_slots WHERE slot_name = 'floor' AND NOT active" >/dev/null
    [ -z "$("${PSQL[@]}" -c "SELECT 1 FROM pg_replication_slots WHERE slot_name = 'floor'")" ] && return
    sleep 0.25
  done
  echo "the slot stayed active" >&2; exit 1
}
stop_consumer() {
  kill "$CONSUMER" 2>/dev/null || true
  wait "$CONSUMER" 2>/dev/null || true
  CONSUMER=
}
row() {  # $1 = mode, $2 = captured "tps cpu walsender", $3 = twin's, $4 = the round's captured tps with no slot
  awk -v round="$ROUND" -v mode="$1" -v base="$4" -v c="$2" -v t="$3" 'BEGIN {
    split(c, a, " "); split(t, b, " ")
    printf "| %s | %s | %d | %d | %.1f %% | %.1f %% | %.1f / %.1f | %.1f / %.1f |\n", round, mode, a[1], b[1], 100 * a[1] / base,
      100 * b[1] / base, a[2], b[2], a[3], b[3] }'
}

echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), fsync=on, synchronous_commit=on, wal_level=logical;" \
  "$CLIENTS clients, ${SECONDS_EACH}s per run; PostgreSQL and pgbench on CPU 0, the slot's reader on CPU 1"
echo "| round | reader | captured TPS | twin TPS | captured / captured with no slot | twin / captured with no slot |" \
  "server CPU per transaction, captured / twin (µs) | walsender's, captured / twin (µs) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for ROUND in $(seq 1 "$ROUNDS"); do
  echo "# round $ROUND, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  base_cap=$(tps cap); base_twin=$(tps twin)
  row "no slot" "$base_cap" "$base_twin" "${base_cap%% *}"

  "${PSQL[@]}" -c "SELECT pg_create_logical_replication_slot('floor', 'pgoutput')" >/dev/null
  taskset -c 1 "$PGBIN/pg_recvlogical" "${CONN[@]}" -d bench -S floor --start -o proto_version=1 -o publication_names=floor_pub \
    -f /dev/null -s 1 &
  CONSUMER=$!
  sleep 1
  cap=$(tps cap); twin=$(tps twin)
  row "streaming (walsender)" "$cap" "$twin" "${base_cap%% *}"
  stop_consumer

  ( while true; do
      taskset -c 1 "$PGBIN/psql" -X -q -At "${CONN[@]}" -d bench -c "SELECT count(*) FROM pg_logical_slot_get_binary_changes('floor',
        NULL, NULL, 'proto_version', '1', 'publication_names', 'floor_pub')" >/dev/null
      sleep "$POLL"
    done ) &
  CONSUMER=$!
  sleep 1
  cap=$(tps cap); twin=$(tps twin)
  row "polled every ${POLL}s" "$cap" "$twin" "${base_cap%% *}"
  stop_consumer
  slot_gone
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
