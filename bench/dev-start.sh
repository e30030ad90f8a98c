#!/usr/bin/env bash
# How long `tidemark dev` takes from the command to its first line, as the README quotes it:
# starts dev mode RUNS times (3 by default) from the built jar, prints each start's own
# "Started in" figure with the load average beside it, then stops it. The first start after a
# build also unpacks PostgreSQL; run once before measuring to leave that out.
#   bash bench/dev-start.sh            # node/target/tidemark.jar
#   RUNS=5 JAR=/path/tidemark.jar bash bench/dev-start.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for run in $(seq 1 "${RUNS:-3}"); do
  (
    source bench/dev-mode.sh
    started="$(sed -n 's/^Started in \([0-9]*\) ms.*/\1/p' "$log")"
    printf 'run %d: started in %s ms, load average %s\n' "$run" "$started" "$(cut -d' ' -f1-3 /proc/loadavg)"
  )
done
