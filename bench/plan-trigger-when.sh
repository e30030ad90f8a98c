#!/usr/bin/env bash
# Benchmark, not a test: what a row trigger costs the statements of a table's other writers, by the
# form of its WHEN (docs/performance.md#what-any-when-costs). bench/plan-trigger-cost.sh measures
# Tidemark's plan trigger as the reconcile makes it; this one asks whether another form would be
# cheaper, and what the table pays with no trigger at all (database.unplanned-tables).
#
# One backend runs STATEMENTS single-row statements one after the other (a PL/pgSQL loop, each
# started and ended by the executor as a client's statement is) on a table that has, in turn:
#   bare       no trigger
#   disabled   the plan trigger, disabled (PostgreSQL skips it before its WHEN)
#   tidemark   the plan trigger as Tidemark makes it: WHEN (current_setting('tidemark.plan', true) = 'on')
#   not_null   WHEN (current_setting('tidemark.plan', true) IS NOT NULL)
#   short      WHEN (current_setting('tm.p', true) IS NOT NULL)
#   user       WHEN (session_user = 'tidemark'), no function call
# and takes the backend's own CPU time per statement from /proc/self/schedstat, for INSERTs and
# for UPDATEs of one row by its key. ROUNDS rounds, the forms in a new order each round; the
# table reports each form's median and its cost over bare.
#
# Usage: bench/plan-trigger-when.sh     (ROUNDS=5 STATEMENTS=100000 PORT=55444)
# Needs: root (to run PostgreSQL as user postgres), /usr/lib/postgresql/<v>/bin, taskset, runuser.
set -euo pipefail
ROUNDS=${ROUNDS:-5}
STATEMENTS=${STATEMENTS:-100000}
PORT=${PORT:-55444}
WORK=$(mktemp -d /tmp/tidemark-when.XXXXXX)
chown postgres "$WORK"
. "$(dirname "$0")/pg-common.sh"
trap 'pg_stop data; rm -rf "$WORK"' EXIT
export PGOPTIONS="-c client_min_messages=warning"
pg_start data "$PORT" 0
PSQL=("$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$PORT" -U postgres -v ON_ERROR_STOP=1)
"${PSQL[@]}" -d postgres -c "CREATE DATABASE bench"
PSQL+=(-d bench)
"${PSQL[@]}" <<'SQL'
CREATE TABLE cap (id int PRIMARY KEY, v int NOT NULL, note text NOT NULL);
ALTER TABLE cap REPLICA IDENTITY FULL;
-- would write, as tidemark.capture() does, if a WHEN let it run
CREATE FUNCTION would_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the trigger ran'; END $$;
CREATE TABLE cpu (round int, form text, kind text, ns float8);
SQL

form() {
  local when=""
  "${PSQL[@]}" -c "DROP TRIGGER IF EXISTS t ON cap"
  case $1 in
    bare) return ;;
    disabled|tidemark) when="pg_catalog.current_setting('tidemark.plan', true) = 'on'" ;;
    not_null) when="pg_catalog.current_setting('tidemark.plan', true) IS NOT NULL" ;;
    short) when="pg_catalog.current_setting('tm.p', true) IS NOT NULL" ;;
    user) when="session_user = 'tidemark'" ;;
  esac
  "${PSQL[@]}" -c "CREATE TRIGGER t AFTER INSERT OR UPDATE OR DELETE ON cap FOR EACH ROW WHEN ($when) EXECUTE FUNCTION would_write()"
  [ "$1" = disabled ] && "${PSQL[@]}" -c "ALTER TABLE cap DISABLE TRIGGER t"
  return 0
}

measure() {  # $1 round, $2 form
  "${PSQL[@]}" -c "TRUNCATE cap"
  "${PSQL[@]}" <<SQL
DO \$\$
DECLARE
  t0 bigint;
BEGIN
  t0 := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
  FOR i IN 1..$STATEMENTS LOOP
    INSERT INTO cap (id, v, note) VALUES (i, 0, 'a row of about forty bytes of text, here');
  END LOOP;
  INSERT INTO cpu VALUES ($1, '$2', 'insert', (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - t0)::float8 / $STATEMENTS);
  t0 := split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint;
  FOR i IN 1..$STATEMENTS LOOP
    UPDATE cap SET v = v + 1 WHERE id = i;
  END LOOP;
  INSERT INTO cpu VALUES ($1, '$2', 'update', (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - t0)::float8 / $STATEMENTS);
END
\$\$;
SQL
}

FORMS=(bare disabled tidemark not_null short user)
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), one backend on CPU 0"
for round in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((${#FORMS[@]} - 1))); do
    f=${FORMS[$(((k + round) % ${#FORMS[@]}))]}
    form "$f"
    measure "$round" "$f"
  done
done
echo "# ended $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| form | INSERT: CPU per statement, median of $ROUNDS (µs) | over bare (µs) | UPDATE: CPU per statement (µs) | over bare (µs) |"
echo "| --- | --- | --- | --- | --- |"
"${PSQL[@]}" <<'SQL'
WITH m AS (
  SELECT form, kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY ns) / 1000 AS us FROM cpu GROUP BY form, kind)
SELECT format('| %s | %s | %s | %s | %s |', i.form, round(i.us::numeric, 2), round((i.us - bi.us)::numeric, 2),
              round(u.us::numeric, 2), round((u.us - bu.us)::numeric, 2))
  FROM m i JOIN m u ON u.form = i.form AND u.kind = 'update'
  JOIN m bi ON bi.form = 'bare' AND bi.kind = 'insert' JOIN m bu ON bu.form = 'bare' AND bu.kind = 'update'
 WHERE i.kind = 'insert'
 ORDER BY i.us;
SQL
