# Sourced by the benchmarks that drive `tidemark dev` with wrk: checks for wrk, builds the jar
# unless BUILD=0, and defines the CPU counters they report. pg_ticks needs $postmaster.
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
if [[ "${BUILD:-1}" != 0 ]]; then
  ./mvnw -q -pl node -am package -DskipTests
fi

ticks() {  # utime + stime of the given pids, in clock ticks
  local sum=0 pid
  for pid in "$@"; do
    [[ -r /proc/$pid/stat ]] || continue
    sum=$((sum + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$sum"
}
# the PostgreSQL server's ticks per process (the postmaster and its children), as "pid ticks" lines,
# and a "reaped ticks" line: what the children that ended have spent (the postmaster's cutime and
# cstime), so that a backend that ends during the measured window (pgbench's, at its end) counts too
pg_ticks() {
  local pid
  for pid in "$postmaster" $(pgrep -P "$postmaster" || true); do
    if [[ -r /proc/$pid/stat ]]; then echo "$pid $(awk '{print $14 + $15}' "/proc/$pid/stat")"; fi
  done
  echo "reaped $(awk '{print $16 + $17}' "/proc/$postmaster/stat")"
  return 0
}
pg_delta() {  # $1, $2 = pg_ticks before and after: a process that ended is counted in reaped, less what it had spent before
  awk 'FILENAME == ARGV[1] { before[$1] = $2; next } { seen[$1] = 1; sum += $2 - (($1 in before) ? before[$1] : 0) }
    END { for (p in before) if (!(p in seen)) sum -= before[p]; print sum + 0 }' "$1" "$2"
}
hz="$(getconf CLK_TCK)"
# How the PostgreSQL server's CPU between pg_ticks $1 and $2 split between its processes, grouped by
# what ps shows of each (the login of a backend, the walsender, the checkpointer...), as shares of
# the processes still running at $2.
pg_split() {
  local pid d
  awk 'FILENAME == ARGV[1] { b[$1] = $2; next } $1 != "reaped" { d = $2 - (($1 in b) ? b[$1] : 0); if (d > 0) print $1, d }' "$1" "$2" \
    | while read -r pid d; do
        echo "$d $(ps -o args= -p "$pid" 2>/dev/null | awk '{ print ($2 == "walsender" || $2 == "logical") ? $2 " " $3 : ($3 == "" ? $2 : $2 " " $3) }')"
      done \
    | awk '{ k = $2; for (i = 3; i <= NF; i++) k = k " " $i; g[k] += $1; all += $1 }
        END { for (k in g) printf "%.1f %% %s\n", g[k] * 100 / all, k }' | sort -rn | head -8
}

# With THREADS=1, measure also prints how the server's CPU in the measured run split between its
# threads, grouped by name without digits (the event loops, the JIT compilers, the Kafka broker's
# threads). thread_ticks lists "thread-id name ticks" for each thread of the pid $1.
thread_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    [[ -r $t/stat ]] && echo "${t##*/} $(tr -d '0-9 ' <"$t/comm") $(awk '{print $14 + $15}' "$t/stat")"
  done
  return 0
}

# One measured wrk run after an unreported warm-up, then the CPU each process spent per unit:
# $1 = name, $2 = url, $3 = lua script, $4 = server pid, $5 = the unit ("call", "commit"), $6 = a
# sed expression that prints the count of units from the script's "[bench]" line.
# Needs CONNECTIONS, WARMUP, MEASURED and work. WRK_TIMEOUT (default 2s) is how long wrk waits for
# a response before it counts a socket timeout.
measure() {
  echo "[bench] load before $1: $(cut -d' ' -f1-3 /proc/loadavg)"
  wrk -t 2 -c "$CONNECTIONS" --timeout "${WRK_TIMEOUT:-2s}" -d "${WARMUP}s" -s "$3" "$2" >"$work/warm.out"
  local s0 s1 w count
  [[ "${THREADS:-0}" == 1 ]] && thread_ticks "$4" >"$work/threads.before"
  s0="$(ticks "$4")"; pg_ticks >"$work/pg.before"
  /usr/bin/time -f '%U %S' -o "$work/wrk.time" wrk -t 2 -c "$CONNECTIONS" --timeout "${WRK_TIMEOUT:-2s}" -d "${MEASURED}s" --latency -s "$3" "$2" >"$work/wrk.out"
  s1="$(ticks "$4")"; pg_ticks >"$work/pg.after"
  [[ "${THREADS:-0}" == 1 ]] && thread_ticks "$4" >"$work/threads.after"
  grep '^\[bench\]' "$work/wrk.out" | sed "s/^\[bench\] /[bench] $1: /"
  count="$(sed -n "$6" "$work/wrk.out")"
  w="$(awk '{printf "%.0f", ($1 + $2) * 1000}' "$work/wrk.time")"
  awk -v n="$1" -v u="$5" -v c="$count" -v s=$((s1 - s0)) -v p="$(pg_delta "$work/pg.before" "$work/pg.after")" -v w="$w" -v hz="$hz" 'BEGIN {
    printf "[bench] %s: CPU per %s: server %.3f ms, PostgreSQL %.3f ms, wrk %.3f ms\n", n, u, s * 1000 / hz / c, p * 1000 / hz / c, w / c }'
  if [[ "${THREADS:-0}" == 1 ]]; then
    pg_split "$work/pg.before" "$work/pg.after" | awk -v n="$1" '{ printf "[bench] %s: PostgreSQL: %s\n", n, $0 }'
    awk 'FILENAME == ARGV[1] { b[$1] = $3; next }
      { d = $3 - (($1 in b) ? b[$1] : 0); if (d > 0) { g[$2] += d; all += d } }
      END { for (k in g) printf "%d %s\n", g[k], k; print all " total" }' "$work/threads.before" "$work/threads.after" \
      | sort -rn | awk -v n="$1" 'NR == 1 { all = $1; next } NR <= 11 { printf "[bench] %s: threads: %s %.1f %%\n", n, $2, $1 * 100 / all }'
  fi
}
