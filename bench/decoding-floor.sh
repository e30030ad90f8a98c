#!/usr/bin/env bash
# Benchmark, not a test: what PostgreSQL's logical decoding alone costs the writers of a database,
# with no Tidemark at all (docs/performance-log.md#the-floor-that-logical-decoding-sets). It tells how
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
#   - polled:     the same slot read every POLL seconds with pg_logical_slot_get_binary_changes
#                 from one psql session on CPU 1: its backend (on CPU 0, as all of PostgreSQL)
#                 decodes what has accumulated, in one go.
# Each run also prints the server's CPU per transaction (every PostgreSQL process, those that ended
# included) and, while streaming, the walsender's, from /proc: the cost of decoding without the noise
# of the TPS. A run's figures include the decoding of everything it committed: the script waits
# until the slot has been read past a marker committed after the run before it reads the CPU
# counters (pg_recvlogical confirms what it read every second), and the captured table and its twin
# take turns at going first.
#
# Usage: bench/decoding-floor.sh        (ROUNDS=3 CLIENTS=16 SECONDS_EACH=20 POLL=0.1 PORT=55441)
# Needs: what bench/pg-common.sh needs, with pgbench and pg_recvlogical in /usr/lib/postgresql/<v>/bin.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-16}
SECONDS_EACH=${SECONDS_EACH:-20}
POLL=${POLL:-0.1}
PORT=${PORT:-55441}
WORK=$(mktemp -d /tmp/tidemark-decoding-floor.XXXXXX)
chown postgres "$WORK"
. "$(dirname "$0")/pg-common.sh"
CONN=(-h 127.0.0.1 -p "$PORT" -U postgres)
PSQL=("$PGBIN/psql" -X -q -At "${CONN[@]}" -d bench -v ON_ERROR_STOP=1)
cleanup() {
  stop_reader
  pg_stop data
  rm -rf "$WORK"
}
trap cleanup EXIT

pg_start data "$PORT" 0
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

# pgbench on $1's table; prints its TPS and, after a space, the server's CPU per transaction in µs
# and the walsender's (0 without one)
tps() {
  local s0 s1 w0 w1 out
  s0=$(server_ticks data); w0=$(walsender_ticks "$PORT" bench pg_recvlogical)
  out=$(taskset -c 0 "$PGBIN/pgbench" -n -M prepared "${CONN[@]}" -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -f "$WORK/$1.sql" bench 2>"$WORK/pgbench.err") \
    || { cat "$WORK/pgbench.err" >&2; exit 1; }
  caught_up "$PORT" bench cap
  s1=$(server_ticks data); w1=$(walsender_ticks "$PORT" bench pg_recvlogical)
  awk -v s="$((s1 - s0))" -v w="$((w1 - w0))" -v hz="$HZ" '
    /^number of transactions actually processed/ { n = $NF }
    /^tps = / { t = $3 }
    END { if (n == 0) exit 1; printf "%.0f %.1f %.1f\n", t, s * 1e6 / hz / n, w * 1e6 / hz / n }' <<<"$out"
}
# both tables, in turns: the captured one first in odd rounds, the twin first in even ones
both() {
  if [ $((ROUND % 2)) = 1 ]; then cap=$(tps cap); twin=$(tps twin); else twin=$(tps twin); cap=$(tps cap); fi
}
slot_gone() {
  for _ in $(seq 1 40); do
    "${PSQL[@]}" -c "SELECT pg_drop_replication_slot('floor') FROM pg_replication_slots WHERE slot_name = 'floor' AND NOT active" >/dev/null
    [ -z "$("${PSQL[@]}" -c "SELECT 1 FROM pg_replication_slots WHERE slot_name = 'floor'")" ] && return
    sleep 0.25
  done
  echo "the slot stayed active" >&2; exit 1
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
  both
  base_cap=$cap
  row "no slot" "$cap" "$twin" "${base_cap%% *}"

  "${PSQL[@]}" -c "SELECT pg_create_logical_replication_slot('floor', 'pgoutput')" >/dev/null
  taskset -c 1 "$PGBIN/pg_recvlogical" "${CONN[@]}" -d bench -S floor --start -o proto_version=1 -o publication_names=floor_pub \
    -f /dev/null -s 1 -F 1 &
  READER=$!
  sleep 1
  both
  row "streaming (walsender)" "$cap" "$twin" "${base_cap%% *}"
  stop_reader

  # one session, a poll every POLL seconds; a poll that fails (the walsender that streamed the slot
  # may not have let go of it yet) is said and the next one tries again
  ( set +e
    while true; do
      echo "SELECT count(*) FROM pg_logical_slot_get_binary_changes('floor', NULL, NULL, 'proto_version', '1', 'publication_names', 'floor_pub');"
      echo "SELECT pg_sleep($POLL);"
    done | taskset -c 1 "$PGBIN/psql" -X -q -At "${CONN[@]}" -d bench >/dev/null ) &
  READER=$!
  sleep 1
  both
  row "polled every ${POLL}s" "$cap" "$twin" "${base_cap%% *}"
  stop_reader
  slot_gone
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
