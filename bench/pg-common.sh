# Shell shared by the benchmarks that start PostgreSQL servers of their own from the Debian binaries
# (bench/decoding-floor.sh, bench/capture-floor.sh). Sourced, not run: the caller sets WORK, a
# folder that user postgres may write, and may set PGBIN. Needs root (to run PostgreSQL as user
# postgres), taskset, runuser and pgrep.
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/pg_recvlogical" ] || { echo "no PostgreSQL binaries: install Debian's postgresql package, or set PGBIN" >&2; exit 1; }
HZ=$(getconf CLK_TCK)

# pg_start DIR PORT CPU: a new server with its data in $WORK/DIR, on 127.0.0.1:PORT, pinned to CPU,
# with fsync and synchronous_commit on and wal_level = logical, as a production server would be
pg_start() {
  runuser -u postgres -- "$PGBIN/initdb" -D "$WORK/$1" -A trust -U postgres >/dev/null
  runuser -u postgres -- taskset -c "$3" "$PGBIN/pg_ctl" -D "$WORK/$1" -l "$WORK/$1.log" -w -o "-c listen_addresses=127.0.0.1 \
    -c port=$2 -c unix_socket_directories=$WORK -c fsync=on -c synchronous_commit=on -c wal_level=logical \
    -c max_connections=200 -c shared_buffers=256MB -c max_wal_size=4GB" start >/dev/null
}
pg_stop() {  # $1 = DIR
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$WORK/$1" -m fast stop >/dev/null 2>&1 || true
}

# server_ticks DIR: CPU ticks so far of the whole server: the postmaster, its live children, and
# the children it reaped (pgbench's backends end with each run)
server_ticks() {
  local pm
  pm=$(head -1 "$WORK/$1/postmaster.pid")
  { cat "/proc/$pm/stat" $(pgrep -P "$pm" | sed 's|.*|/proc/&/stat|') 2>/dev/null || true; } | awk '{ t += $14 + $15 + $16 + $17 } END { print t }'
}

# walsender_ticks PORT DB APPLICATION: CPU ticks so far of the walsender that streams to the
# replication connection named APPLICATION (0 while there is none)
walsender_ticks() {
  local pid
  pid=$("$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$1" -U postgres -d "$2" \
    -c "SELECT pid FROM pg_stat_replication WHERE application_name = '$3' LIMIT 1")
  if [ -n "$pid" ] && [ -r "/proc/$pid/stat" ]; then awk '{ print $14 + $15 }' "/proc/$pid/stat"; else echo 0; fi
}

# caught_up PORT DB TABLE: returns once every logical slot of DB has been confirmed past a marker
# row committed into TABLE (columns v and note) now; at once when DB has no slot. A reader that
# confirms every second (pg_recvlogical -F 1, Tidemark's relay) has then decoded all that was
# committed before, so the server's CPU read next includes that decoding.
caught_up() {
  local marker
  marker=$("$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$1" -U postgres -d "$2" -v ON_ERROR_STOP=1 \
    -c "INSERT INTO $3 (v, note) VALUES (0, 'marker') RETURNING pg_current_wal_insert_lsn()")
  for _ in $(seq 1 1200); do
    [ "$("$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$1" -U postgres -d "$2" -c "SELECT coalesce(bool_and(confirmed_flush_lsn > '$marker'), true)
      FROM pg_replication_slots WHERE slot_type = 'logical' AND database = current_database()")" = t ] && return
    sleep 0.1
  done
  echo "the slot's reader did not catch up within 120 s" >&2; exit 1
}

# The reader the caller started in the background, with its children (a pipeline's psql): set
# READER to its pid, and stop_reader stops it.
READER=
stop_reader() {
  if [ -n "$READER" ]; then
    pkill -P "$READER" 2>/dev/null || true
    kill "$READER" 2>/dev/null || true
    wait "$READER" 2>/dev/null || true
  fi
  READER=
}
