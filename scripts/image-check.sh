#!/usr/bin/env bash
# Builds Tidemark's OCI image without a Docker daemon or a registry (the `image` profile of
# node/pom.xml) and checks it: the tarball is an OCI layout, the config runs `java ... Main serve`
# as the non-root user 10001 with the MCP, ops and cluster ports exposed, and the image's own file
# tree starts a node whose ops port answers /health/live. The image is run from its unpacked
# layers in a chroot with its own /proc, since there is no container runtime here.
# Usage: scripts/image-check.sh [--no-build]      Prints "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
tar_file=node/target/tidemark-image.tar
if [ "${1:-}" != --no-build ]; then
  ./mvnw -B -q -pl node -am -Pimage -DskipTests package || { echo "image build failed" >&2; exit 1; }
fi
[ -f "$tar_file" ] || { echo "$tar_file is missing" >&2; exit 1; }

work=$(mktemp -d)
node_pid=
cleanup() {
  # node_pid is the subshell around unshare, which ignores SIGTERM; the node in the image is unshare's child,
  # and would otherwise outlive the check (--kill-child does not reach it once chroot changed its user)
  for u in $(pgrep -f -- "--mount-proc=$work/root/proc"); do
    pkill -KILL -P "$u" 2>/dev/null
    kill -KILL "$u" 2>/dev/null
  done
  [ -n "$node_pid" ] && kill "$node_pid" 2>/dev/null && wait "$node_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0
check() {
  local sentence=$1; shift
  if "$@" >"$work/out" 2>&1; then passed=$((passed + 1)); echo "ok   - $sentence"
  else failed=$((failed + 1)); echo "FAIL - $sentence"; sed 's/^/       /' "$work/out" | head -20; fi
}

mkdir -p "$work/oci" "$work/root"
tar -xf "$tar_file" -C "$work/oci"
# the image config and the layers, in order, from the OCI index and manifest
python3 - "$work/oci" >"$work/image.env" <<'PY'
import json, sys, os
root = sys.argv[1]
blob = lambda d: os.path.join(root, "blobs", *d.split(":"))
index = json.load(open(os.path.join(root, "index.json")))
manifest = json.load(open(blob(index["manifests"][0]["digest"])))
print("MANIFEST_TYPE=" + manifest["mediaType"])
print("CONFIG=" + blob(manifest["config"]["digest"]))
print("LAYERS='" + " ".join(blob(l["digest"]) for l in manifest["layers"]) + "'")
PY
. "$work/image.env"
field() { python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; print(json.dumps(c.get(sys.argv[2])))' "$CONFIG" "$1"; }

check "the tarball is an OCI image layout" grep -q '"imageLayoutVersion"' "$work/oci/oci-layout"
check "its manifest is an OCI manifest" test "$MANIFEST_TYPE" = application/vnd.oci.image.manifest.v1+json
check "it runs as the non-root user 10001" test "$(field User)" = '"10001:10001"'
check "its entrypoint is java -jar /app/tidemark.jar, as the chart's commands expect" \
  bash -c "field() { $(declare -f field | sed 1d); }; CONFIG='$CONFIG'; e=\$(field Entrypoint); [[ \$e == '[\"java\"'* && \$e == *'\"-jar\", \"/app/tidemark.jar\"]' ]]"
check "its default command is serve" test "$(field Cmd)" = '["serve"]'
check "it exposes the MCP port 8080 and the ops port 9090" \
  bash -c "p='$(field ExposedPorts)'; [[ \$p == *'8080/tcp'* && \$p == *'9090/tcp'* ]]"
check "PATH finds the image's own java" bash -c "[[ '$(field Env)' == *'PATH=/opt/java/bin'* ]]"

for layer in $LAYERS; do tar -xzf "$layer" -C "$work/root" 2>/dev/null || tar -xf "$layer" -C "$work/root"; done
check "the image holds its own Java runtime and no shell" bash -c "[ -x '$work/root/opt/java/bin/java' ] && [ ! -e '$work/root/bin/sh' ]"
classpath_complete() {
  local dir="$work/root/app" entry missing=0
  (cd "$work" && unzip -p "$dir/tidemark.jar" META-INF/MANIFEST.MF) | tr -d '\r' |
    awk '/^Class-Path:/ {sub(/^Class-Path: /, ""); cp = $0; next} cp && /^ / {cp = cp substr($0, 2); next} cp {print cp; cp = ""} END {if (cp) print cp}' |
    tr ' ' '\n' | grep -v '^$' >"$work/classpath"
  [ -s "$work/classpath" ] || { echo "no Class-Path in /app/tidemark.jar"; return 1; }
  while read -r entry; do [ -e "$dir/$entry" ] || { echo "missing: /app/$entry"; missing=1; }; done <"$work/classpath"
  # and every library Jib wrote is on it
  for lib in "$dir"/libs/*.jar; do grep -qx "libs/$(basename "$lib")" "$work/classpath" || { echo "not on Class-Path: $lib"; missing=1; }; done
  return $missing
}
check "every Class-Path entry of /app/tidemark.jar is in the image, and every library is on it" classpath_complete
check "the image's files are owned by root, so the user 10001 cannot change them" \
  bash -c "[ \"\$(stat -c %u '$work/root/opt/java/bin/java')\" = 0 ]"

# run a command of the image as it would run: its entrypoint, its user, its environment
entrypoint=$(python3 -c 'import json,sys; print("\0".join(json.load(open(sys.argv[1]))["config"]["Entrypoint"]))' "$CONFIG" | tr '\0' '\n')
mapfile -t entry <<<"$entrypoint"
chroot_bin=$(command -v chroot)
in_image() {
  if [ "$(id -u)" = 0 ]; then
    unshare -fpm --kill-child --mount-proc="$work/root/proc" env -i PATH=/opt/java/bin JAVA_HOME=/opt/java \
      "$chroot_bin" --userspec=10001:10001 "$work/root" "/opt/java/bin/${entry[0]}" "${entry[@]:1}" "$@"
  else
    unshare -rfpm --kill-child --mount-proc="$work/root/proc" env -i PATH=/opt/java/bin JAVA_HOME=/opt/java \
      "$chroot_bin" "$work/root" "/opt/java/bin/${entry[0]}" "${entry[@]:1}" "$@"
  fi
}
check "the entrypoint prints Tidemark's version" bash -c "$(declare -f in_image); $(declare -p entry work chroot_bin); in_image --version | grep -q '^tidemark '"

ops_port=$((20000 + RANDOM % 20000))
cat >"$work/root/tmp/tidemark.yaml" <<YAML
database.url: postgresql://127.0.0.1:1/none
kafka.bootstrap-servers: 127.0.0.1:1
cluster.port: $((ops_port + 1))
http.port: $((ops_port + 2))
ops.port: $ops_port
YAML
in_image serve --roles gateway --config /tmp/tidemark.yaml >"$work/node.log" 2>&1 &
node_pid=$!
live() {
  for _ in $(seq 120); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ops_port/health/live") && [ "$code" = 200 ] && return 0
    sleep 0.5
  done
  tail -20 "$work/node.log"; return 1
}
check "a node started from the image answers /health/live on its ops port" live
check "its readiness is down while PostgreSQL and Kafka are unreachable" \
  bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$ops_port/health/ready)\" = 503 ]"
started() {
  for _ in $(seq 120); do grep -q 'runs \[GATEWAY\]' "$work/node.log" && return 0; sleep 0.5; done
  tail -20 "$work/node.log"; return 1
}
check "the node joins its cluster and deploys the gateway role" started
check "Hazelcast finds the JDK internals it needs (no module warning)" \
  bash -c "! grep -q 'Java modular environment' '$work/node.log'"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
