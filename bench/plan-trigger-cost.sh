#!/usr/bin/env bash
# Benchmark, not a test: what the plan trigger costs the other writers of a served table
# (docs/performance.md#capture). Every served table carries the row trigger tidemark_capture, whose
# WHEN clause (the setting tidemark.plan is 'on') is false for every writer but the change tools'
# plans and commits, so the trigger's function never runs for them: what they pay is PostgreSQL
# evaluating the WHEN (one setting lookup) once per row; nothing is queued for the commit.
#
# Starts its own PostgreSQL from the Debian binaries (fsync and synchronous_commit on,
# wal_level = logical), pinned to CPU 0 with pgbench, and one table, which gets the trigger exactly
# as tidemark.reconcile_capture() creates it (with a function that would write, as
# tidemark.capture() does, if the WHEN let it run) before each run "with trigger", and loses it
# before each run "bare": the same table and the same pages, so nothing but the trigger differs.
# Then, ROUNDS times, the two take turns at going first for each kind of statement:
#   - insert:  single-row INSERT transactions (pgbench -M prepared, CLIENTS clients);
#   - batch:   INSERTs of BATCH rows in one statement. The trigger costs the same per row in both,
#              and in a batch the commit's cost, whose noise on a shared machine is larger than
#              the trigger's cost, is shared by BATCH rows, so the difference shows.
#   - statements: STATEMENTS single-row INSERT statements run one after the other by one backend
#              (a PL/pgSQL loop), each started and ended by the executor as a client's INSERT is, so
#              that what the trigger costs once per statement (its WHEN made ready) counts too,
#              without the commits and round trips around them; the backend's own CPU time comes
#              from /proc/self/schedstat, in nanoseconds.
# Each pgbench run takes the server's CPU per row (every PostgreSQL process, those that ended
# included, from /proc). The trigger's CPU per row is the difference between the two batches; the
# last column sets it against the CPU of a bare single-row INSERT of the same round. On a shared
# machine the single-row pgbench runs vary by more than the trigger costs; the batches and the
# statements in one backend are what resolve it.
# Last, what the replica identity costs in WAL: UPDATES single-row UPDATEs of one integer column of
# a 1,000-row table whose rows hold 200 bytes of text, under REPLICA IDENTITY FULL and under
# DEFAULT (the key alone, database.key-only-tables), as WAL bytes per UPDATE (commit records
# included, after a checkpoint).
#
# Usage: bench/plan-trigger-cost.sh     (ROUNDS=5 CLIENTS=8 SECONDS_EACH=10 BATCH=1000 STATEMENTS=100000 UPDATES=20000 PORT=55443)
# Needs: root (to run PostgreSQL as user postgres), /usr/lib/postgresql/<v>/bin with pgbench,
# taskset, runuser and pgrep.
set -euo pipefail
ROUNDS=${ROUNDS:-5}
CLIENTS=${CLIENTS:-8}
SECONDS_EACH=${SECONDS_EACH:-10}
BATCH=${BATCH:-1000}
UPDATES=${UPDATES:-20000}
STATEMENTS=${STATEMENTS:-100000}
PORT=${PORT:-55443}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/pgbench" ] || { echo "no PostgreSQL binaries: install Debian's postgresql package, or set PGBIN" >&2; exit 1; }
WORK=$(mktemp -d /tmp/tidemark-plan-trigger.XXXXXX)
chown postgres "$WORK"
CONN=(-h 127.0.0.1 -p "$PORT" -U postgres)
# the DROP TRIGGER IF EXISTS of a table without it says so; nothing else here notices anything
export PGOPTIONS="-c client_min_messages=warning"
PSQL=("$PGBIN/psql" -X -q -At "${CONN[@]}" -d bench -v ON_ERROR_STOP=1)

cleanup() {
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/data" -A trust -U postgres >/dev/null
runuser -u postgres -- taskset -c 0 "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w -o "-c listen_addresses=127.0.0.1 \
  -c port=$PORT -c unix_socket_directories=$WORK -c fsync=on -c synchronous_commit=on -c wal_level=logical \
  -c max_connections=100 -c shared_buffers=256MB -c max_wal_size=4GB" start >/dev/null
"$PGBIN/psql" -X -q "${CONN[@]}" -c "CREATE DATABASE bench"
"${PSQL[@]}" <<'SQL'
CREATE TABLE cap (id bigserial PRIMARY KEY, v int NOT NULL, note text NOT NULL);
CREATE TABLE wide (id int PRIMARY KEY, v int NOT NULL, note text NOT NULL);
INSERT INTO wide SELECT g, 0, repeat('x', 200) FROM generate_series(1, 1000) g;
CREATE TABLE plan_change (xid xid8, relid oid, op text, key jsonb);
-- what tidemark.capture() does when it runs; the WHEN below keeps it from running in this benchmark
CREATE FUNCTION capture() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO plan_change VALUES (pg_current_xact_id(), TG_RELID, TG_OP, to_jsonb(ARRAY[NEW.id]));
  RETURN NULL;
END $$;
SQL
printf '%s\n' '\set v random(1, 1000000)' "INSERT INTO cap (v, note) VALUES (:v, 'a row of about forty bytes of text, here');" \
  >"$WORK/insert.sql"
printf '%s\n' '\set v random(1, 1000000)' \
  "INSERT INTO cap (v, note) SELECT :v + g, 'a row of about forty bytes of text, here' FROM generate_series(1, $BATCH) g;" \
  >"$WORK/batch.sql"
# the trigger on (trig) or off (bare) the table, as the reconcile makes it
trigger() {
  "${PSQL[@]}" -c "DROP TRIGGER IF EXISTS tidemark_capture ON cap" -c "DROP TRIGGER IF EXISTS tidemark_capture_truncate ON cap" >/dev/null
  if [ "$1" = trig ]; then
    "${PSQL[@]}" >/dev/null <<'SQL'
CREATE TRIGGER tidemark_capture AFTER INSERT OR UPDATE OR DELETE ON cap FOR EACH ROW
  WHEN (pg_catalog.current_setting('tidemark.plan', true) = 'on') EXECUTE FUNCTION capture('id');
CREATE TRIGGER tidemark_capture_truncate AFTER TRUNCATE ON cap FOR EACH STATEMENT
  WHEN (pg_catalog.current_setting('tidemark.plan', true) = 'on') EXECUTE FUNCTION capture();
SQL
  fi
}

HZ=$(getconf CLK_TCK)
# CPU ticks of the whole server: the postmaster, its live children, and the children it reaped
server_ticks() {
  local pm
  pm=$(head -1 "$WORK/data/postmaster.pid")
  { cat "/proc/$pm/stat" $(pgrep -P "$pm" | sed 's|.*|/proc/&/stat|') 2>/dev/null || true; } | awk '{ t += $14 + $15 + $16 + $17 } END { print t }'
}
# pgbench with the trigger as $1 says (bare or trig), script $2 ($3 rows a transaction); prints its TPS
# and the server's CPU per row in µs
run() {
  local s0 s1 out
  trigger "$1"
  "${PSQL[@]}" -c "CHECKPOINT" >/dev/null
  s0=$(server_ticks)
  out=$(taskset -c 0 "$PGBIN/pgbench" -n -M prepared "${CONN[@]}" -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -f "$WORK/$2.sql" bench 2>"$WORK/pgbench.err") \
    || { cat "$WORK/pgbench.err" >&2; exit 1; }
  s1=$(server_ticks)
  awk -v s="$((s1 - s0))" -v hz="$HZ" -v rows="$3" '
    /^number of transactions actually processed/ { n = $NF }
    /^tps = / { t = $3 }
    END { if (n == 0) exit 1; printf "%.0f %.2f\n", t, s * 1e6 / hz / (n * rows) }' <<<"$out"
}

echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), fsync=on, synchronous_commit=on, wal_level=logical;" \
  "$CLIENTS clients, ${SECONDS_EACH}s per run, batches of $BATCH rows; PostgreSQL and pgbench on CPU 0"
echo "| round | single INSERTs: bare TPS / with trigger | server CPU per INSERT, bare / with trigger (µs) | INSERTs of $BATCH rows: server CPU per row, bare / with trigger (µs) | the trigger's CPU per row (µs) | as a share of a bare INSERT's |"
echo "| --- | --- | --- | --- | --- | --- |"
for ROUND in $(seq 1 "$ROUNDS"); do
  echo "# round $ROUND, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  if [ $((ROUND % 2)) = 1 ]; then
    bi=$(run bare insert 1); ti=$(run trig insert 1); bb=$(run bare batch "$BATCH"); tb=$(run trig batch "$BATCH")
  else
    ti=$(run trig insert 1); bi=$(run bare insert 1); tb=$(run trig batch "$BATCH"); bb=$(run bare batch "$BATCH")
  fi
  BARE_INSERTS="${BARE_INSERTS:-} ${bi#* }"
  awk -v round="$ROUND" -v bi="$bi" -v ti="$ti" -v bb="$bb" -v tb="$tb" 'BEGIN {
    split(bi, a, " "); split(ti, b, " "); split(bb, c, " "); split(tb, d, " ")
    printf "| %s | %d / %d | %.1f / %.1f | %.2f / %.2f | %.2f | %.2f %% |\n", round, a[1], b[1], a[2], b[2], c[2], d[2], d[2] - c[2],
      100 * (d[2] - c[2]) / a[2] }'
done

# the server's CPU per bare single-row INSERT, the mean of the rounds' pgbench runs
BARE_INSERT_US=$(awk '{ for (i = 1; i <= NF; i++) t += $i } END { printf "%.1f", t / NF }' <<<"$BARE_INSERTS")
echo
echo "| round | single-row INSERT statements in one backend: CPU per statement, bare / with trigger (µs) | the trigger's (µs) | as a share of a bare INSERT's server CPU ($BARE_INSERT_US µs, the mean of the pgbench runs above) |"
echo "| --- | --- | --- | --- |"
"${PSQL[@]}" -c "CREATE TABLE cpu_per_insert (round int, mode text, ns float8)"
for ROUND in $(seq 1 "$ROUNDS"); do
  order="bare trig"
  [ $((ROUND % 2)) = 0 ] && order="trig bare"
  for mode in $order; do
    trigger "$mode"
    "${PSQL[@]}" >/dev/null <<SQL
DO \$\$
DECLARE
  t0 bigint := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
BEGIN
  FOR i IN 1..$STATEMENTS LOOP
    INSERT INTO cap (v, note) VALUES (i, 'a row of about forty bytes of text, here');
  END LOOP;
  INSERT INTO cpu_per_insert VALUES ($ROUND, '$mode',
    (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - t0)::float8 / $STATEMENTS);
END
\$\$;
SQL
  done
  "${PSQL[@]}" -c "SELECT format('| %s | %s / %s | %s | %s |', $ROUND, round((b.ns / 1000)::numeric, 2), round((t.ns / 1000)::numeric, 2),
      round(((t.ns - b.ns) / 1000)::numeric, 2), round((100 * (t.ns - b.ns) / 1000 / $BARE_INSERT_US)::numeric, 2) || ' %')
    FROM cpu_per_insert b JOIN cpu_per_insert t ON t.round = b.round AND t.mode = 'trig' WHERE b.round = $ROUND AND b.mode = 'bare'"
done

printf '%s\n' '\set id random(1, 1000)' "UPDATE wide SET v = v + 1 WHERE id = :id;" >"$WORK/update.sql"
echo
echo "| replica identity | WAL per single-row UPDATE (bytes) |"
echo "| --- | --- |"
for identity in FULL DEFAULT; do
  "${PSQL[@]}" -c "ALTER TABLE wide REPLICA IDENTITY $identity" -c "CHECKPOINT" >/dev/null
  w0=$("${PSQL[@]}" -c "SELECT pg_current_wal_insert_lsn()")
  taskset -c 0 "$PGBIN/pgbench" -n -M prepared "${CONN[@]}" -c "$CLIENTS" -j 2 -t $((UPDATES / CLIENTS)) -f "$WORK/update.sql" bench \
    >/dev/null 2>"$WORK/pgbench.err" || { cat "$WORK/pgbench.err" >&2; exit 1; }
  "${PSQL[@]}" -c "SELECT '| $identity | ' || round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$w0') / $((UPDATES / CLIENTS * CLIENTS))) || ' |'"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
