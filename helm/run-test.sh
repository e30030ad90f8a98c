#!/usr/bin/env bash
# The chart, run: renders helm/tidemark with the values and Secrets of docs/guides/deploy-with-helm.md's
# Install section, runs every pod of the rendered migration Job and Deployments from the image's
# unpacked layers, each in network, mount and PID namespaces of its own, against a PostgreSQL server
# and Kafka brokers under the names the values give them, waits for each pod's probes, then follows
# the release's NOTES to a token and an MCP call. helm/run_chart.py does the work; the guide's section
# "The chart, run" describes it.
# Usage: helm/run-test.sh [--no-build] [--keep] [--hold=SECONDS]
#   --no-build: use the image and jar already built (scripts/image-check.sh builds them in .ci/run);
#   --keep: keep the work folder with every pod's log; --hold: leave it all running that long before
#   the cleanup, to look at it. Needs root. Prints "N passed, M failed".
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=1 debug=()
for a in "$@"; do
  case $a in
    --no-build) build=0 ;;
    --keep|--hold=*) debug+=("$a") ;;
    *) echo "usage: helm/run-test.sh [--no-build] [--keep] [--hold=SECONDS]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "helm/run-test.sh needs root: it makes network, mount and PID namespaces" >&2; exit 2; }
if [ $build = 1 ]; then
  ./mvnw -B -q -pl node -am -Pimage -DskipTests package || { echo "image build failed" >&2; exit 1; }
fi
for f in node/target/tidemark-image.tar node/target/tidemark.jar; do
  [ -f "$f" ] || { echo "$f is missing: build it with ./mvnw -B -pl node -am -Pimage -DskipTests package" >&2; exit 2; }
done
helm=$(bash helm/install-helm.sh) || exit 2
# a Python with PyYAML: the one on PATH, else Debian's, installed with its python3-yaml when missing
python=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import yaml' 2>/dev/null; then python=$(command -v "$p"); break; fi
done
if [ -z "$python" ]; then
  apt-get install -y -qq python3-yaml >/dev/null || { apt-get update -qq >/dev/null && apt-get install -y -qq python3-yaml >/dev/null; }
  python=/usr/bin/python3
fi
exec "$python" helm/run_chart.py --root "$root" --helm "$helm" --image node/target/tidemark-image.tar \
  --jar node/target/tidemark.jar --guide docs/guides/deploy-with-helm.md "${debug[@]}"
