#!/usr/bin/env bash
# Checks the Tidemark chart offline: helm lint --strict, then helm template with
# assertions written as sentences. Needs bash, npm and unzip; installs helm into
# tools/bin (git-ignored) when it is missing. Prints "N passed, M failed" and exits
# non-zero when anything failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
chart="$here/tidemark"
values="$chart/ci/test-values.yaml"
guide="$root/docs/guides/deploy-with-helm.md"
helm=$(bash "$here/install-helm.sh") || exit 2

passed=0
failed=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# check "sentence" command...: the command's success is the sentence being true.
check() {
  local sentence=$1
  shift
  if "$@" >"$scratch/out" 2>&1; then
    passed=$((passed + 1))
    echo "ok   - $sentence"
  else
    failed=$((failed + 1))
    echo "FAIL - $sentence"
    sed 's/^/       /' "$scratch/out" | head -20
  fi
}

# A complete, valid release rendered with the sample values.
render() { "$helm" template t "$chart" -f "$values" "$@"; }
# Minimal values given on the command line only.
render_bare() { "$helm" template t "$chart" "$@"; }
# Fails (exit 0) only when the render fails with a message containing $1.
fails_with() {
  local msg=$1
  shift
  local out
  if out=$("$@" 2>&1); then
    echo "rendered although it should have failed"
    return 1
  fi
  grep -qF -- "$msg" <<<"$out" || { echo "$out"; echo "(expected the message to contain: $msg)"; return 1; }
}
count() { grep -cE -- "$1" "$2" || true; }
has() { grep -qE -- "$1" "$2" || { echo "no line matches: $1"; return 1; }; }
hasnt() { ! grep -qE -- "$1" "$2" || { echo "unexpected line: $(grep -E -- "$1" "$2" | head -1)"; return 1; }; }
eq() { [ "$1" = "$2" ] || { echo "expected $2, got $1"; return 1; }; }

roles="gateway query command changelog"

render >"$scratch/all.yaml" 2>"$scratch/render.err" || { cat "$scratch/render.err"; echo "0 passed, 1 failed"; exit 1; }
all="$scratch/all.yaml"
for r in $roles; do
  render --show-only "templates/$r/deployment.yaml" >"$scratch/$r.yaml"
done
render --show-only templates/cluster-service.yaml >"$scratch/headless.yaml"
render --show-only templates/configmap.yaml >"$scratch/config.yaml"
render --show-only templates/migrate-job.yaml >"$scratch/migrate.yaml"

check "helm lint --strict passes with the sample values" \
  "$helm" lint --strict "$chart" -f "$values"
for f in "$chart"/ci/*.yaml; do
  check "helm lint --strict and helm template pass with ci/$(basename "$f")" \
    bash -c "'$helm' lint --strict '$chart' -f '$f' && '$helm' template t '$chart' -f '$f' >/dev/null"
done

# TLS to PostgreSQL and TLS with SASL to Kafka, from Secrets the operator manages
tls_values="$chart/ci/tls-values.yaml"
"$helm" template t "$chart" -f "$tls_values" --show-only templates/configmap.yaml >"$scratch/tls-config.yaml" 2>&1
"$helm" template t "$chart" -f "$tls_values" --show-only templates/query/deployment.yaml >"$scratch/tls-query.yaml" 2>&1
"$helm" template t "$chart" -f "$tls_values" --show-only templates/migrate-job.yaml >"$scratch/tls-migrate.yaml" 2>&1
check "TLS values write the ssl and SASL keys into tidemark.yaml, the SASL password as a file" \
  bash -c "grep -q 'database.ssl-mode: \"verify-full\"' '$scratch/tls-config.yaml' && grep -q 'database.ssl-root-cert: \"/etc/tidemark/database-tls/ca.crt\"' '$scratch/tls-config.yaml' && grep -q 'kafka.security-protocol: \"SASL_SSL\"' '$scratch/tls-config.yaml' && grep -q 'kafka.ssl-ca-file: \"/etc/tidemark/kafka-tls/ca.crt\"' '$scratch/tls-config.yaml' && grep -q 'kafka.sasl-username: \"tidemark\"' '$scratch/tls-config.yaml' && grep -q 'kafka.sasl-password-file: \"/etc/tidemark/kafka-sasl/password\"' '$scratch/tls-config.yaml' && ! grep -q 'kafka.sasl-password:' '$scratch/tls-config.yaml'"
check "every pod and the migration Job mount the CA and SASL Secrets under the keys the values name" \
  bash -c "for f in '$scratch/tls-query.yaml' '$scratch/tls-migrate.yaml'; do grep -q 'secretName: tidemark-db-ca' \$f && grep -q 'key: root.pem' \$f && grep -q 'mountPath: /etc/tidemark/database-tls' \$f && grep -q 'secretName: tidemark-kafka-ca' \$f && grep -q 'mountPath: /etc/tidemark/kafka-sasl' \$f && grep -q 'key: sasl-password' \$f || { echo \"missing in \$f\"; exit 1; }; done"
check "without TLS values, tidemark.yaml says disable and PLAINTEXT and nothing is mounted for them" \
  bash -c "grep -q 'database.ssl-mode: \"disable\"' '$scratch/config.yaml' && grep -q 'kafka.security-protocol: \"PLAINTEXT\"' '$scratch/config.yaml' && ! grep -q 'database-tls\\|kafka-tls\\|kafka-sasl' '$scratch/query.yaml'"
check "a PostgreSQL CA Secret without verify-ca or verify-full is refused by name" \
  fails_with "database.tls.existingSecret is only used with database.tls.mode verify-ca or verify-full" render --set database.tls.existingSecret=ca
check "SASL_SSL without a user name and a password Secret is refused by name" \
  fails_with "kafka.securityProtocol SASL_SSL needs kafka.sasl.username and kafka.sasl.existingSecret" render --set kafka.securityProtocol=SASL_SSL
check "SASL settings with a protocol that has no SASL are refused by name" \
  fails_with "kafka.sasl.username and kafka.sasl.existingSecret are only used with kafka.securityProtocol SASL_PLAINTEXT or SASL_SSL" render --set kafka.sasl.username=u
check "a Kafka CA Secret with PLAINTEXT is refused by name" \
  fails_with "kafka.tls.existingSecret is only used with kafka.securityProtocol SSL or SASL_SSL" render --set kafka.tls.existingSecret=ca
# OAuth, ceilings and rate limits from first-class values
render --set http.publicUrl=https://tidemark.example.com --set auth.oauth.issuer=https://idp.example.com/realms/a \
  --set 'auth.oauth.roles={tidemark_reader,tidemark_writer}' --set 'auth.roleTools.tidemark_reader={status,query}' \
  --set 'auth.roleTools.tidemark_writer={*}' --set auth.rateLimit.callsPerMinute=600 --set auth.rateLimit.burst=50 \
  --show-only templates/configmap.yaml >"$scratch/oauth-config.yaml" 2>&1
check "OAuth, ceiling and rate-limit values write their keys into tidemark.yaml" \
  bash -c "grep -q 'http.public-url: \"https://tidemark.example.com\"' '$scratch/oauth-config.yaml' && grep -q 'auth.oauth.issuer: \"https://idp.example.com/realms/a\"' '$scratch/oauth-config.yaml' && grep -q 'auth.oauth.roles: \"tidemark_reader,tidemark_writer\"' '$scratch/oauth-config.yaml' && grep -q 'auth.oauth.role-claim: \"pg_role\"' '$scratch/oauth-config.yaml' && grep -qF 'auth.role-tools: \"tidemark_reader:status|query,tidemark_writer:*\"' '$scratch/oauth-config.yaml' && grep -q 'auth.rate-limit.calls-per-minute: \"600\"' '$scratch/oauth-config.yaml' && grep -q 'auth.rate-limit.burst: \"50\"' '$scratch/oauth-config.yaml'"
check "without an issuer, tidemark.yaml has no OAuth keys, no ceiling and no rate limit" \
  bash -c "! grep -q 'auth.oauth' '$scratch/config.yaml' && grep -q 'auth.role-tools: \"\"' '$scratch/config.yaml' && grep -q 'auth.rate-limit.calls-per-minute: \"0\"' '$scratch/config.yaml'"
check "an issuer without http.publicUrl is refused by name" \
  fails_with "auth.oauth.issuer needs http.publicUrl" render --set auth.oauth.issuer=https://idp.example.com --set 'auth.oauth.roles={r}'
check "an issuer without roles is refused by name" \
  fails_with "auth.oauth.issuer needs auth.oauth.roles" render --set auth.oauth.issuer=https://idp.example.com --set http.publicUrl=https://t.example.com
check "a burst above the minute's budget is refused by name" \
  fails_with "auth.rateLimit.burst may not be larger" render --set auth.rateLimit.callsPerMinute=10 --set auth.rateLimit.burst=20
check "OAuth keys are refused in extraConfig, since values own them" \
  fails_with "extraConfig may not set auth.oauth.issuer" render --set-string 'extraConfig.auth\.oauth\.issuer=https://x'
check "the schema refuses an unknown PostgreSQL TLS mode" \
  fails_with "database.tls.mode must be one of the following" render --set database.tls.mode=prefer

# further databases: one entry per database in tidemark.yaml, their Secrets mounted in every pod
dbs='[{"name":"sales","url":"postgresql://db:5432/sales","existingSecret":"sales-pg","existingSecretPasswordKey":"pw","callerPasswordsSecret":"sales-callers","poolSize":4}]'
render --set-json "databases=$dbs" --show-only templates/configmap.yaml >"$scratch/dbs-config.yaml" 2>&1
render --set-json "databases=$dbs" --show-only templates/gateway/deployment.yaml >"$scratch/dbs-gateway.yaml" 2>&1
render --set-json "databases=$dbs" --show-only templates/migrate-job.yaml >"$scratch/dbs-migrate.yaml" 2>&1
check "each further database is an entry of databases in tidemark.yaml, its Secrets read as files" \
  bash -c "grep -qF 'databases: \"[{\\\"caller-password-dir\\\":\\\"/etc/tidemark/databases/sales-callers\\\",\\\"name\\\":\\\"sales\\\",\\\"password-file\\\":\\\"/etc/tidemark/databases/sales-password/password\\\",\\\"pool-size\\\":\\\"4\\\",\\\"url\\\":\\\"postgresql://db:5432/sales\\\"}]\"' '$scratch/dbs-config.yaml' || { cat '$scratch/dbs-config.yaml'; exit 1; }"
check "every pod and the migration Job mount a further database's password and caller Secrets" \
  bash -c "for f in '$scratch/dbs-gateway.yaml' '$scratch/dbs-migrate.yaml'; do grep -q 'secretName: sales-pg' \$f && grep -q 'key: pw' \$f && grep -q 'mountPath: /etc/tidemark/databases/sales-password' \$f && grep -q 'secretName: sales-callers' \$f && grep -q 'mountPath: /etc/tidemark/databases/sales-callers' \$f || { echo \"missing in \$f\"; exit 1; }; done"
check "without further databases tidemark.yaml has no databases key" \
  hasnt '^databases:' "$scratch/config.yaml"
check "a further database without a url is refused by the schema" \
  fails_with "url is required" render --set-json 'databases=[{"name":"sales"}]'

check "every role gets its own Deployment" \
  bash -c "for r in $roles; do grep -q \"^  name: t-tidemark-\$r\$\" '$scratch/'\$r.yaml && grep -q '^kind: Deployment' '$scratch/'\$r.yaml || { echo \"no Deployment for \$r\"; exit 1; }; done; [ \$(grep -c '^kind: Deployment' '$all') = 4 ]"

for r in $roles; do
  check "the $r Deployment runs only the $r role from the shared image" \
    has "args: \[\"serve\", \"--roles\", \"$r\", \"--config\", \"/etc/tidemark/tidemark.yaml\"\]" "$scratch/$r.yaml"
done

check "every container runs the image's entrypoint (java -jar /app/tidemark.jar with its JVM flags), not a command of its own" \
  bash -c "! grep -n '^ *command:' '$all' '$scratch/migrate.yaml'"

check "every Deployment rolls one pod at a time and never drops below its count" \
  bash -c "[ \$(grep -c 'maxSurge: 1' '$all') = 4 ] && [ \$(grep -c 'maxUnavailable: 0' '$all') = 4 ]"

check "every Deployment has a startup, a liveness and a readiness probe on the ops port" \
  bash -c "for r in $roles; do f='$scratch/'\$r.yaml; grep -A3 'startupProbe:' \$f | grep -q 'path: /health/live' && grep -A3 'livenessProbe:' \$f | grep -q 'path: /health/live' && grep -A3 'readinessProbe:' \$f | grep -q 'path: /health/ready' && [ \$(grep -c 'port: ops' \$f) = 3 ] || { echo \"probes wrong for \$r\"; exit 1; }; done"

check "every Deployment carries a checksum of its config" \
  bash -c "[ \$(grep -cE 'checksum/config: [0-9a-f]{64}' '$all') = 4 ]"

check "changing a config value changes the checksum, so pods roll" \
  bash -c "a=\$(grep checksum/config '$scratch/query.yaml'); b=\$(\"$helm\" template t '$chart' -f '$values' --set database.poolSize=20 --show-only templates/query/deployment.yaml | grep checksum/config); [ \"\$a\" != \"\$b\" ]"

check "every pod announces its pod IP to Hazelcast and to the event bus" \
  bash -c "for r in $roles; do f='$scratch/'\$r.yaml; grep -q 'fieldPath: status.podIP' \$f && grep -A1 'name: TIDEMARK_CLUSTER_HOST$' \$f | grep -q 'value: \"\$(POD_IP)\"' && grep -A1 'name: TIDEMARK_CLUSTER_EVENT_BUS_HOST$' \$f | grep -q 'value: \"\$(POD_IP)\"' || { echo \"pod IP wiring missing for \$r\"; exit 1; }; done"

check "only the gateway opens the http port" \
  bash -c "grep -q 'name: http$' '$scratch/gateway.yaml' && for r in query command changelog; do ! grep -q 'name: http$' '$scratch/'\$r.yaml || { echo \"\$r opens http\"; exit 1; }; done"

check "every Deployment opens the ops, hazelcast (5701) and eventbus (5702) ports" \
  bash -c "for r in $roles; do f='$scratch/'\$r.yaml; grep -A1 'name: ops$' \$f | grep -q 9090 && grep -A1 'name: hazelcast$' \$f | grep -q 5701 && grep -A1 'name: eventbus$' \$f | grep -q 5702 || { echo \"ports wrong for \$r\"; exit 1; }; done"

check "the headless Service has no cluster IP" has '^  clusterIP: None$' "$scratch/headless.yaml"
check "the headless Service publishes not-ready addresses" has '^  publishNotReadyAddresses: true$' "$scratch/headless.yaml"
check "the headless Service selects the cluster members of every role, not one component" \
  bash -c "grep -q 'tidemark.dev/cluster-member: \"true\"' '$scratch/headless.yaml' && ! grep -q 'app.kubernetes.io/component: gateway' '$scratch/headless.yaml' && [ \$(grep -c 'tidemark.dev/cluster-member: \"true\"' '$all') = 5 ]"
check "members find each other through the headless Service's DNS name" \
  has 'cluster.kubernetes-service-dns: "t-tidemark-cluster.default.svc.cluster.local"' "$scratch/config.yaml"
check "a starting pod looks for members for 5 s, since Hazelcast's DNS discovery looks only then" \
  has 'cluster.join-wait-seconds: "5"' "$scratch/config.yaml"
check "the schema refuses a join wait of 0, with which every pod would form a cluster alone" \
  fails_with "joinWaitSeconds" render --set cluster.joinWaitSeconds=0
check "the event bus listens on a fixed port" has 'cluster.event-bus-port: "5702"' "$scratch/config.yaml"
check "pods log JSON lines by default" has 'log.format: "json"' "$scratch/config.yaml"
check "the cluster is named after the release, so two releases never merge" has 'cluster.name: "t-tidemark"' "$scratch/config.yaml"

check "the gateway Service forwards port 80 to the gateways' http port" \
  bash -c "render_gw=\$(\"$helm\" template t '$chart' -f '$values' --show-only templates/gateway/service.yaml); grep -q 'port: 80$' <<<\"\$render_gw\" && grep -q 'targetPort: http' <<<\"\$render_gw\" && grep -q 'app.kubernetes.io/component: gateway' <<<\"\$render_gw\""

check "gateways scale with an autoscaling/v2 HorizontalPodAutoscaler on CPU" \
  bash -c "grep -A3 'apiVersion: autoscaling/v2' '$all' | grep -q 'kind: HorizontalPodAutoscaler' && grep -q 'averageUtilization: 70' '$all' && grep -q 'minReplicas: 2' '$all'"
check "an autoscaled gateway Deployment leaves its replica count to the autoscaler" \
  hasnt '^  replicas:' "$scratch/gateway.yaml"
check "with autoscaling off, the gateway Deployment sets its replicas and no autoscaler is rendered" \
  bash -c "out=\$(\"$helm\" template t '$chart' -f '$values' --set gateway.autoscaling.enabled=false --set gateway.replicas=3); ! grep -q HorizontalPodAutoscaler <<<\"\$out\" && grep -q '^  replicas: 3' <<<\"\$out\""
check "the query Deployment runs the replicas the values ask for" has '^  replicas: 3$' "$scratch/query.yaml"

check "every role gets a PodDisruptionBudget that lets one of its pods go at a time" \
  bash -c "for r in $roles; do out=\$(\"$helm\" template t '$chart' -f '$values' --show-only templates/\$r/poddisruptionbudget.yaml); grep -q 'kind: PodDisruptionBudget' <<<\"\$out\" && grep -q 'maxUnavailable: 1\$' <<<\"\$out\" && grep -q \"app.kubernetes.io/component: \$r\" <<<\"\$out\" || { echo \"no budget for \$r\"; exit 1; }; done"
check "a role scaled to one pod keeps a budget that still lets a drain evict that pod" \
  bash -c "\"$helm\" template t '$chart' -f '$values' --set command.replicas=1 --show-only templates/command/poddisruptionbudget.yaml | grep -q 'maxUnavailable: 1\$'"
check "a pod that is not ready can always be evicted, so a broken pod never holds a drain" \
  bash -c "[ \$(grep -c 'unhealthyPodEvictionPolicy: AlwaysAllow' '$all') = 4 ]"
check "on Kubernetes before 1.27, which lacks it, the budget leaves unhealthyPodEvictionPolicy out" \
  bash -c "! \"$helm\" template t '$chart' -f '$values' --kube-version 1.26.0 | grep -q unhealthyPodEvictionPolicy"
check "the schema refuses a budget of 0, which would block every node drain" \
  fails_with "maxUnavailable" render --set defaults.podDisruptionBudget.maxUnavailable=0
check "the schema refuses a budget of 0%" \
  fails_with "maxUnavailable" render --set-string query.podDisruptionBudget.maxUnavailable=0%
check "the changelog role runs two pods by default: one relays, the other stands by" \
  has '^  replicas: 2$' "$scratch/changelog.yaml"

check "every role spreads its pods over nodes, counting only the pods of its own role" \
  bash -c "for r in $roles; do f='$scratch/'\$r.yaml; sed -n '/topologySpreadConstraints:/,\$p' \$f >'$scratch/spread'; grep -q 'topologyKey: kubernetes.io/hostname' '$scratch/spread' && grep -q 'whenUnsatisfiable: ScheduleAnyway' '$scratch/spread' && grep -q \"app.kubernetes.io/component: \$r\" '$scratch/spread' && grep -q 'maxSkew: 1' '$scratch/spread' || { echo \"no node spread for \$r\"; exit 1; }; done"
check "every role prefers zones with fewer of its pods, which leaves nodes without a zone label schedulable" \
  bash -c "for r in $roles; do f='$scratch/'\$r.yaml; sed -n '/podAntiAffinity:/,/topologySpreadConstraints:/p' \$f >'$scratch/zone'; grep -q 'preferredDuringSchedulingIgnoredDuringExecution:' '$scratch/zone' && grep -q 'topologyKey: topology.kubernetes.io/zone' '$scratch/zone' && grep -q 'weight: 100' '$scratch/zone' && grep -q \"app.kubernetes.io/component: \$r\" '$scratch/zone' || { echo \"no zone preference for \$r\"; exit 1; }; ! grep -q 'topology.kubernetes.io/zone' <(sed -n '/topologySpreadConstraints:/,\$p' \$f) || { echo \"\$r has a zone spread constraint\"; exit 1; }; done"
check "a role's own topologySpreadConstraints replace the shared ones, and other roles keep them" \
  bash -c "out=\$(\"$helm\" template t '$chart' -f '$values' --set query.topologySpreadConstraints[0].maxSkew=2 --set query.topologySpreadConstraints[0].topologyKey=rack --set query.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule --show-only templates/query/deployment.yaml); grep -q 'topologyKey: rack' <<<\"\$out\" && grep -q 'whenUnsatisfiable: DoNotSchedule' <<<\"\$out\" && ! grep -q 'topologyKey: kubernetes.io/hostname' <<<\"\$out\" && grep -q 'topologyKey: kubernetes.io/hostname' '$scratch/command.yaml'"
check "a spread constraint that names its own labelSelector keeps it" \
  bash -c "\"$helm\" template t '$chart' -f '$values' --set-json 'defaults.topologySpreadConstraints=[{\"maxSkew\":1,\"topologyKey\":\"kubernetes.io/hostname\",\"whenUnsatisfiable\":\"ScheduleAnyway\",\"labelSelector\":{\"matchLabels\":{\"app\":\"mine\"}}}]' --show-only templates/gateway/deployment.yaml | sed -n '/topologySpreadConstraints:/,\$p' | grep -q 'app: mine'"
check "zoneSpread.weight 0 in a role block turns the zone preference off for that role only" \
  bash -c "out=\$(\"$helm\" template t '$chart' -f '$values' --set gateway.zoneSpread.weight=0); ! grep -q 'podAntiAffinity' <(\"$helm\" template t '$chart' -f '$values' --set gateway.zoneSpread.weight=0 --show-only templates/gateway/deployment.yaml) && [ \$(grep -c 'topology.kubernetes.io/zone' <<<\"\$out\") = 3 ]"
check "the zone preference is added to a role's own pod anti-affinity, not put in its place" \
  bash -c "out=\$(\"$helm\" template t '$chart' -f '$values' --set-json 'command.affinity={\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":5,\"podAffinityTerm\":{\"topologyKey\":\"rack\"}}]}}' --show-only templates/command/deployment.yaml); grep -q 'topologyKey: rack' <<<\"\$out\" && grep -q 'topologyKey: topology.kubernetes.io/zone' <<<\"\$out\""
check "the schema refuses a spread constraint without whenUnsatisfiable" \
  fails_with "whenUnsatisfiable is required" render --set defaults.topologySpreadConstraints[0].maxSkew=1 --set defaults.topologySpreadConstraints[0].topologyKey=k

check "a role's own value replaces the shared default and other roles keep the default" \
  bash -c "grep -A2 'limits:' '$scratch/gateway.yaml' | grep -q 'memory: 2Gi' && grep -A2 'limits:' '$scratch/query.yaml' | grep -q 'memory: 1Gi' && grep -q 'cpu: 250m' '$scratch/gateway.yaml'"
check "an explicit false in a role block wins over a shared true" \
  bash -c "out=\$(\"$helm\" template t '$chart' -f '$values' --set query.podDisruptionBudget.enabled=false); [ \$(grep -c '^kind: PodDisruptionBudget' <<<\"\$out\") = 3 ] && ! grep -A3 '^kind: PodDisruptionBudget' <<<\"\$out\" | grep -q 'name: t-tidemark-query\$'"
check "a role's extraEnv is added after the shared extraEnv" \
  bash -c "grep -A3 'name: SHARED_ENV' '$scratch/gateway.yaml' | grep -q 'name: GATEWAY_ONLY' && grep -q 'name: SHARED_ENV' '$scratch/query.yaml' && ! grep -q GATEWAY_ONLY '$scratch/query.yaml'"
check "JVM options reach the JVM through JAVA_TOOL_OPTIONS" \
  bash -c "grep -A1 'name: JAVA_TOOL_OPTIONS' '$scratch/command.yaml' | grep -q MaxRAMPercentage"

check "the image tag defaults to the chart's appVersion" has 'image: "ghcr.io/tidemark/tidemark:0.1.0"' "$scratch/query.yaml"
check "image.repository and image.tag choose another image" \
  bash -c "\"$helm\" template t '$chart' -f '$values' --set image.repository=registry.local/tm --set image.tag=9.9.9 --show-only templates/query/deployment.yaml | grep -q 'image: \"registry.local/tm:9.9.9\"'"

check "the config file always requires tokens" has '^    auth.enabled: "true"$' "$scratch/config.yaml"
check "extraConfig cannot turn authentication off" \
  fails_with "extraConfig may not set auth.enabled" render --set-string 'extraConfig.auth\.enabled=false'
check "extraEnv cannot turn authentication off" \
  fails_with "may not set TIDEMARK_AUTH_ENABLED" render --set 'command.extraEnv[0].name=TIDEMARK_AUTH_ENABLED' --set-string 'command.extraEnv[0].value=false'
check "extraConfig cannot fight the chart over a key it manages" \
  fails_with "extraConfig may not set database.url" render --set-string 'extraConfig.database\.url=postgresql://elsewhere/db'
check "extraConfig adds keys the chart does not manage" \
  bash -c "\"$helm\" template t '$chart' -f '$values' --set-string 'extraConfig.some\.future-key=42' --show-only templates/configmap.yaml | grep -q '\"some.future-key\": \"42\"'"
check "large numbers are written out in full, not in exponent form" has 'http.max-body-bytes: "4194304"' "$scratch/config.yaml"
check "the config file carries the external PostgreSQL and Kafka settings" \
  bash -c "grep -q 'database.url: \"postgresql://postgres.data.svc.cluster.local:5432/app\"' '$scratch/config.yaml' && grep -q 'kafka.bootstrap-servers: \"kafka-0' '$scratch/config.yaml' && grep -q 'kafka.topic-replication-factor: \"3\"' '$scratch/config.yaml'"

check "the database password is read from a mounted Secret file, never from the config" \
  bash -c "grep -q 'database.password-file: \"/etc/tidemark/secrets/database-password\"' '$scratch/config.yaml' && ! grep -q 'database.password:' '$scratch/config.yaml' && grep -A1 'secret:' '$scratch/query.yaml' | grep -q 'secretName: tidemark-db' && grep -q 'mountPath: /etc/tidemark/secrets' '$scratch/query.yaml'"
check "the caller roles' passwords are a mounted Secret folder, for the nodes and the migration alike" \
  bash -c "grep -q 'database.caller-password-dir: \"/etc/tidemark/caller-passwords\"' '$scratch/config.yaml' && grep -q 'secretName: tidemark-callers' '$scratch/query.yaml' && grep -q 'mountPath: /etc/tidemark/caller-passwords' '$scratch/command.yaml' && grep -q 'secretName: tidemark-callers' '$scratch/migrate.yaml'"
check "without callerPasswordsSecret no caller-password folder is configured or mounted" \
  bash -c "out=\$(\"$helm\" template t '$chart' --set database.url=postgresql://db:5432/app --set kafka.bootstrapServers=k:9092 --set database.password=x); ! grep -q 'caller-password' <<<\"\$out\""
check "an existing Secret means the chart creates no password Secret of its own" \
  bash -c "! grep -B1 -A6 '^kind: Secret' '$all' | grep -q 'name: t-tidemark-database'"
check "without an existing Secret, the chart stores database.password in its own Secret" \
  bash -c "out=\$(\"$helm\" template t '$chart' --set database.url=postgresql://db:5432/app --set kafka.bootstrapServers=k:9092 --set database.password=s3cret --show-only templates/secret.yaml); grep -q 'name: t-tidemark-database' <<<\"\$out\" && grep -q \"password: \\\"\$(printf s3cret | base64)\\\"\" <<<\"\$out\""
check "rendering without database.url fails and names the value" \
  fails_with "database.url is required" render_bare --set kafka.bootstrapServers=k:9092 --set database.password=x
check "rendering without kafka.bootstrapServers fails and names the value" \
  fails_with "kafka.bootstrapServers is required" render_bare --set database.url=postgresql://db:5432/app --set database.password=x
check "rendering without any password source fails and names both values" \
  fails_with "set database.existingSecret" render_bare --set database.url=postgresql://db:5432/app --set kafka.bootstrapServers=k:9092

check "migrations run as a pre-install and pre-upgrade hook Job" \
  bash -c "sed -n '/^kind: Job/,\$p' '$scratch/migrate.yaml' | grep -q 'helm.sh/hook: pre-install,pre-upgrade' && grep -q 'args: \[\"migrate\", \"--config\", \"/etc/tidemark/tidemark.yaml\"\]' '$scratch/migrate.yaml'"
check "the migration pod is not a cluster member" \
  bash -c "grep -q '^kind: Job' '$scratch/migrate.yaml' && ! grep -q 'tidemark.dev/cluster-member' '$scratch/migrate.yaml'"
check "the migration Job brings its own config, since a pre-install hook runs before the release's ConfigMap exists" \
  bash -c "sed -n '/^kind: ConfigMap/,/^---/p' '$scratch/migrate.yaml' | grep -q 'helm.sh/hook-weight: \"-10\"' && grep -A1 'configMap:' '$scratch/migrate.yaml' | grep -q 'name: t-tidemark-migrate'"
check "migrations.enabled=false renders no migration Job" \
  bash -c "! \"$helm\" template t '$chart' -f '$values' --set migrations.enabled=false | grep -q '^kind: Job'"

cat >"$scratch/named.yaml" <<'YAML'
namedTools:
  tools:
    - {name: open_tickets, description: d, kind: read, statement: "SELECT 1 AS one", roles: [app_reader]}
  toolsets:
    support: [open_tickets, status]
YAML
render -f "$scratch/named.yaml" >"$scratch/named-all.yaml"
check "namedTools become a ConfigMap of their own that every role mounts as a folder, and tidemark.yaml names the file" \
  bash -c "grep -q 'name: t-tidemark-named-tools' '$scratch/named-all.yaml' && grep -q 'database.tools-file: \"/etc/tidemark/named-tools/tools.yaml\"' '$scratch/named-all.yaml' && [ \$(grep -c 'mountPath: /etc/tidemark/named-tools$' '$scratch/named-all.yaml') = 4 ] && ! grep -A1 'mountPath: /etc/tidemark/named-tools$' '$scratch/named-all.yaml' | grep -q subPath"
check "a change of namedTools alone restarts no pod: the config checksum stays" \
  bash -c "[ \"\$(grep 'checksum/config' '$all' | sort -u)\" = \"\$(grep 'checksum/config' '$scratch/named-all.yaml' | sort -u)\" ]"
check "without namedTools no tools file is named or mounted" \
  bash -c "! grep -q 'named-tools' '$all'"

check "the Ingress is off by default" \
  bash -c "! \"$helm\" template t '$chart' --set database.url=postgresql://db:5432/app --set kafka.bootstrapServers=k:9092 --set database.password=x | grep -q '^kind: Ingress'"
check "an enabled Ingress routes its paths to the gateway Service" \
  bash -c "grep -A30 '^kind: Ingress' '$all' | grep -q 'name: t-tidemark-gateway' && grep -A30 '^kind: Ingress' '$all' | grep -q 'path: /mcp'"
check "a ServiceAccount is created and every role uses it" \
  bash -c "grep -q '^kind: ServiceAccount' '$all' && [ \$(grep -c 'serviceAccountName: t-tidemark$' '$all') = 4 ]"

check "the schema refuses a string for gateway.replicas" \
  fails_with "gateway.replicas: Invalid type. Expected: integer, given: string" render --set-string gateway.replicas=two
check "the schema refuses an unknown image pull policy" \
  fails_with "image.pullPolicy must be one of the following" render --set image.pullPolicy=Sometimes
check "the schema refuses a misspelt value instead of ignoring it" \
  fails_with "Additional property autoscalling is not allowed" render --set gateway.autoscalling.enabled=false
check "the schema refuses a database URL that is not postgresql://" \
  fails_with "database.url" render --set database.url=mysql://db/app
check "the schema offers no value that turns authentication off" \
  fails_with "Additional property enabled is not allowed" render --set auth.enabled=false

bash "$here/notes.sh" "$helm" "$chart" t -f "$values" >"$scratch/notes" 2>&1
bash "$here/notes.sh" "$helm" "$chart" t --set database.url=postgresql://db:5432/app --set kafka.bootstrapServers=k:9092 \
  --set database.password=x >"$scratch/notes-bare" 2>&1
check "NOTES.txt renders and names the endpoint and the token command" \
  bash -c "grep -q 'https://tidemark.example.com/mcp' '$scratch/notes' && grep -q 'token create' '$scratch/notes'"
check "NOTES.txt has the token made for a role of the callerPasswordsSecret, whose keys it shows how to list" \
  bash -c "grep -q 'kubectl describe secret -n default tidemark-callers\$' '$scratch/notes' && grep -q 'token create --name my-agent --role <role> ' '$scratch/notes' && ! grep -q 'tidemark_reader\|tidemark_writer' '$scratch/notes'"
check "without callerPasswordsSecret, NOTES.txt says no role can serve calls and how to give one a password" \
  bash -c "grep -q 'No role can serve calls yet: database.callerPasswordsSecret is not set' '$scratch/notes-bare' && grep -q 'kubectl create secret generic tidemark-callers' '$scratch/notes-bare' && grep -q 'set database.callerPasswordsSecret=tidemark-callers' '$scratch/notes-bare'"

# Dotted names of the values in values.yaml. Blocks passed through to Kubernetes as they
# are (resources, security contexts, probes, ingress hosts) count as one value.
value_names() {
  awk '
    /^[[:space:]]*(#|$)/ { next }
    {
      match($0, /^ */); ind = RLENGTH / 2
      if (skip >= 0 && ind > skip) next
      skip = -1
      line = $0; sub(/^ */, "", line)
      if (line !~ /^[A-Za-z][A-Za-z0-9]*:/) next
      key = line; sub(/:.*/, "", key); path[ind] = key
      name = path[0]; for (i = 1; i <= ind; i++) name = name "." path[i]
      rest = line; sub(/^[^:]*:[ ]*/, "", rest)
      if (rest != "") { print name; next }
      if (key ~ /^(resources|podSecurityContext|securityContext|startupProbe|livenessProbe|readinessProbe|hosts|schemas|topologySpreadConstraints)$/) { print name; skip = ind }
    }' "$chart/values.yaml"
}
export -f value_names
export chart

# Every helm install/upgrade command in the guide must render: each runs as helm template
# in a folder holding the guide's example files (blocks after "<!-- file: NAME -->") and
# a link to helm/, like the repository root.
if [ -f "$guide" ]; then
  docdir="$scratch/guide"
  mkdir -p "$docdir"
  ln -s "$here" "$docdir/helm"
  awk -v dir="$docdir" '
    /^<!-- file: .* -->$/ { name = $3; next }
    /^```/ { if (inside) { inside = 0; name = "" } else { inside = 1 }; next }
    inside && name != "" { print > (dir "/" name) }' "$guide"
  guide_cmds=$(awk '
    /^```/ { inside = !inside; next }
    !inside { next }
    cont { line = line " " $0; sub(/[[:space:]]*\\$/, "", line); cont = ($0 ~ /\\$/); if (!cont) print line; next }
    /^helm (install|upgrade)/ { line = $0; sub(/[[:space:]]*\\$/, "", line); cont = ($0 ~ /\\$/); if (!cont) print line }' "$guide" | tr -s ' ')
  n=0
  while IFS= read -r cmd; do
    [ -n "$cmd" ] || continue
    n=$((n + 1))
    args=$(sed -E 's/^helm (install|upgrade)( --install)? //' <<<"$cmd")
    check "the guide's command '$cmd' renders" \
      bash -c "cd '$docdir' && eval \"'$helm' template $args\" >/dev/null"
  done <<<"$guide_cmds"
  check "the guide shows at least one install command" bash -c "[ $n -gt 0 ]"
  check "the guide lists every value of values.yaml" \
    bash -c "missing=''; for k in \$(value_names); do grep -qF \"\\\`\$k\\\`\" '$guide' || missing=\"\$missing \$k\"; done; [ -z \"\$missing\" ] || { echo \"not in the guide:\$missing\"; exit 1; }"
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
