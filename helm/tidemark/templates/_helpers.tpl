{{/* Names, labels and the pieces every role's Deployment shares. */}}

{{- define "tidemark.roles" -}}
gateway query command changelog
{{- end -}}

{{- define "tidemark.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Kept to 50 characters so that "-changelog" and other suffixes still fit in 63. */}}
{{- define "tidemark.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tidemark.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tidemark.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tidemark.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tidemark.labels" -}}
helm.sh/chart: {{ include "tidemark.chart" . }}
{{ include "tidemark.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tidemark
{{- end -}}

{{/* Labels of one role: call with (dict "root" $ "role" "gateway"). */}}
{{- define "tidemark.roleSelectorLabels" -}}
{{ include "tidemark.selectorLabels" .root }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "tidemark.roleLabels" -}}
{{ include "tidemark.labels" .root }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{/* Only pods carrying this label are cluster members; the migration Job's pod is not. */}}
{{- define "tidemark.memberLabel" -}}
tidemark.dev/cluster-member: "true"
{{- end -}}

{{- define "tidemark.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "tidemark.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tidemark.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "tidemark.clusterServiceName" -}}
{{- printf "%s-cluster" (include "tidemark.fullname" .) -}}
{{- end -}}

{{- define "tidemark.clusterServiceDns" -}}
{{- printf "%s.%s.svc.%s" (include "tidemark.clusterServiceName" .) .Release.Namespace .Values.clusterDomain -}}
{{- end -}}

{{- define "tidemark.clusterName" -}}
{{- default (include "tidemark.fullname" .) .Values.cluster.name -}}
{{- end -}}

{{- define "tidemark.databaseSecretName" -}}
{{- if .Values.database.existingSecret -}}
{{- .Values.database.existingSecret -}}
{{- else -}}
{{- printf "%s-database" (include "tidemark.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "tidemark.databaseSecretKey" -}}
{{- if .Values.database.existingSecret -}}
{{- .Values.database.existingSecretPasswordKey -}}
{{- else -}}
password
{{- end -}}
{{- end -}}

{{- define "tidemark.passwordFile" -}}
/etc/tidemark/secrets/database-password
{{- end -}}

{{/* Fails the render with a message naming the value that is missing or wrong. */}}
{{- define "tidemark.validate" -}}
{{- $_ := required "database.url is required: set it to your PostgreSQL server as postgresql://host:port/dbname" .Values.database.url -}}
{{- $_ := required "kafka.bootstrapServers is required: set it to your Kafka brokers as host:port[,host:port...]" .Values.kafka.bootstrapServers -}}
{{- if and (not .Values.database.existingSecret) (not .Values.database.password) -}}
{{- fail "set database.existingSecret (the name of a Secret holding the password) or database.password" -}}
{{- end -}}
{{- $managed := list "node.id" "roles" "http.host" "http.port" "http.path" "http.max-body-bytes" "http.allowed-origins" "ops.host" "ops.port" "database.name" "database.url" "database.user" "database.password" "database.password-file" "database.caller-passwords" "database.caller-password-dir" "database.pool-size" "database.schemas" "database.statement-timeout-ms" "database.changelog-url" "database.ssl-mode" "database.ssl-root-cert" "databases" "kafka.bootstrap-servers" "kafka.security-protocol" "kafka.ssl-ca-file" "kafka.sasl-mechanism" "kafka.sasl-username" "kafka.sasl-password" "kafka.sasl-password-file" "kafka.topic-prefix" "kafka.topic-partitions" "kafka.topic-replication-factor" "kafka.request-timeout-ms" "cluster.name" "cluster.host" "cluster.port" "cluster.members" "cluster.kubernetes-service-dns" "cluster.join-wait-seconds" "cluster.event-bus-host" "cluster.event-bus-port" "bus.send-timeout-ms" "log.format" "log.level" "http.public-url" "auth.oauth.issuer" "auth.oauth.jwks-url" "auth.oauth.audience" "auth.oauth.role-claim" "auth.oauth.roles" "auth.role-tools" "auth.rate-limit.calls-per-minute" "auth.rate-limit.burst" "database.tools-file" -}}
{{- if and .Values.auth.oauth.issuer (not .Values.http.publicUrl) -}}
{{- fail "auth.oauth.issuer needs http.publicUrl: the URL clients reach the gateways at is the resource and audience of every access token" -}}
{{- end -}}
{{- if and .Values.auth.oauth.issuer (not .Values.auth.oauth.roles) -}}
{{- fail "auth.oauth.issuer needs auth.oauth.roles: the PostgreSQL roles an access token may name" -}}
{{- end -}}
{{- if and .Values.auth.rateLimit.burst (gt (int64 .Values.auth.rateLimit.burst) (int64 .Values.auth.rateLimit.callsPerMinute)) -}}
{{- fail "auth.rateLimit.burst may not be larger than auth.rateLimit.callsPerMinute" -}}
{{- end -}}
{{- if and .Values.database.tls.existingSecret (not (hasPrefix "verify-" .Values.database.tls.mode)) -}}
{{- fail (printf "database.tls.existingSecret is only used with database.tls.mode verify-ca or verify-full, not %s" .Values.database.tls.mode) -}}
{{- end -}}
{{- $kafkaTls := hasSuffix "SSL" .Values.kafka.securityProtocol -}}
{{- $kafkaSasl := hasPrefix "SASL_" .Values.kafka.securityProtocol -}}
{{- if and .Values.kafka.tls.existingSecret (not $kafkaTls) -}}
{{- fail (printf "kafka.tls.existingSecret is only used with kafka.securityProtocol SSL or SASL_SSL, not %s" .Values.kafka.securityProtocol) -}}
{{- end -}}
{{- if and $kafkaSasl (or (not .Values.kafka.sasl.username) (not .Values.kafka.sasl.existingSecret)) -}}
{{- fail (printf "kafka.securityProtocol %s needs kafka.sasl.username and kafka.sasl.existingSecret (a Secret holding the password)" .Values.kafka.securityProtocol) -}}
{{- end -}}
{{- if and (not $kafkaSasl) (or .Values.kafka.sasl.username .Values.kafka.sasl.existingSecret) -}}
{{- fail (printf "kafka.sasl.username and kafka.sasl.existingSecret are only used with kafka.securityProtocol SASL_PLAINTEXT or SASL_SSL, not %s" .Values.kafka.securityProtocol) -}}
{{- end -}}
{{- range $key, $_ := .Values.extraConfig -}}
{{- if eq $key "auth.enabled" -}}
{{- fail "extraConfig may not set auth.enabled: the chart always requires tokens" -}}
{{- end -}}
{{- if has $key $managed -}}
{{- fail (printf "extraConfig may not set %s: the chart sets it from its own values" $key) -}}
{{- end -}}
{{- end -}}
{{- range $role := splitList " " (include "tidemark.roles" .) -}}
{{- range $env := concat ($.Values.defaults.extraEnv | default list) ((index $.Values $role).extraEnv | default list) -}}
{{- if eq $env.name "TIDEMARK_AUTH_ENABLED" -}}
{{- fail (printf "%s.extraEnv may not set TIDEMARK_AUTH_ENABLED: the chart always requires tokens" $role) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Mounts of the TLS and SASL Secrets and of the further databases' Secrets that are set, for every pod that connects to PostgreSQL or Kafka. */}}
{{- define "tidemark.transportMounts" -}}
{{- if .Values.database.tls.existingSecret }}
- name: database-tls
  mountPath: /etc/tidemark/database-tls
  readOnly: true
{{- end }}
{{- if .Values.kafka.tls.existingSecret }}
- name: kafka-tls
  mountPath: /etc/tidemark/kafka-tls
  readOnly: true
{{- end }}
{{- if .Values.kafka.sasl.existingSecret }}
- name: kafka-sasl
  mountPath: /etc/tidemark/kafka-sasl
  readOnly: true
{{- end }}
{{- range $i, $db := .Values.databases }}
{{- if $db.existingSecret }}
- name: database-{{ $i }}-password
  mountPath: /etc/tidemark/databases/{{ $db.name }}-password
  readOnly: true
{{- end }}
{{- if $db.callerPasswordsSecret }}
- name: database-{{ $i }}-callers
  mountPath: /etc/tidemark/databases/{{ $db.name }}-callers
  readOnly: true
{{- end }}
{{- end }}
{{- end -}}

{{- define "tidemark.transportVolumes" -}}
{{- if .Values.database.tls.existingSecret }}
- name: database-tls
  secret:
    secretName: {{ .Values.database.tls.existingSecret }}
    defaultMode: 0440
    items:
      - key: {{ .Values.database.tls.caKey }}
        path: ca.crt
{{- end }}
{{- if .Values.kafka.tls.existingSecret }}
- name: kafka-tls
  secret:
    secretName: {{ .Values.kafka.tls.existingSecret }}
    defaultMode: 0440
    items:
      - key: {{ .Values.kafka.tls.caKey }}
        path: ca.crt
{{- end }}
{{- if .Values.kafka.sasl.existingSecret }}
- name: kafka-sasl
  secret:
    secretName: {{ .Values.kafka.sasl.existingSecret }}
    defaultMode: 0440
    items:
      - key: {{ .Values.kafka.sasl.passwordKey }}
        path: password
{{- end }}
{{- range $i, $db := .Values.databases }}
{{- if $db.existingSecret }}
- name: database-{{ $i }}-password
  secret:
    secretName: {{ $db.existingSecret }}
    defaultMode: 0440
    items:
      - key: {{ $db.existingSecretPasswordKey | default "password" }}
        path: password
{{- end }}
{{- if $db.callerPasswordsSecret }}
- name: database-{{ $i }}-callers
  secret:
    secretName: {{ $db.callerPasswordsSecret }}
    defaultMode: 0440
{{- end }}
{{- end }}
{{- end -}}

{{/* The databases key: one entry per further database, its Secrets as the files mounted above, as JSON. */}}
{{- define "tidemark.databasesJson" -}}
{{- $out := list -}}
{{- range .Values.databases -}}
{{- $e := dict "name" .name "url" .url -}}
{{- if .existingSecret -}}{{- $_ := set $e "password-file" (printf "/etc/tidemark/databases/%s-password/password" .name) -}}{{- end -}}
{{- if .callerPasswordsSecret -}}{{- $_ := set $e "caller-password-dir" (printf "/etc/tidemark/databases/%s-callers" .name) -}}{{- end -}}
{{- if .poolSize -}}{{- $_ := set $e "pool-size" (.poolSize | int64 | toString) -}}{{- end -}}
{{- if .schemas -}}{{- $_ := set $e "schemas" (join "," .schemas) -}}{{- end -}}
{{- $out = append $out $e -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* tidemark.yaml: flat dotted keys, every value a string as Tidemark reads them. */}}
{{- define "tidemark.configYaml" -}}
{{- include "tidemark.validate" . -}}
http.host: "0.0.0.0"
http.port: {{ .Values.ports.http | int64 | quote }}
http.path: {{ .Values.http.path | quote }}
http.max-body-bytes: {{ .Values.http.maxBodyBytes | int64 | quote }}
http.allowed-origins: {{ join "," .Values.http.allowedOrigins | quote }}
ops.host: "0.0.0.0"
ops.port: {{ .Values.ports.ops | int64 | quote }}
database.name: {{ .Values.database.name | quote }}
database.url: {{ .Values.database.url | quote }}
database.user: {{ .Values.database.user | quote }}
database.password-file: {{ include "tidemark.passwordFile" . | quote }}
{{- if .Values.database.callerPasswordsSecret }}
database.caller-password-dir: "/etc/tidemark/caller-passwords"
{{- end }}
database.pool-size: {{ .Values.database.poolSize | int64 | quote }}
database.schemas: {{ join "," .Values.database.schemas | quote }}
database.statement-timeout-ms: {{ .Values.database.statementTimeoutMs | int64 | quote }}
{{- if .Values.database.changelogUrl }}
database.changelog-url: {{ .Values.database.changelogUrl | quote }}
{{- end }}
database.ssl-mode: {{ .Values.database.tls.mode | quote }}
{{- if .Values.database.tls.existingSecret }}
database.ssl-root-cert: "/etc/tidemark/database-tls/ca.crt"
{{- end }}
{{- if .Values.databases }}
databases: {{ include "tidemark.databasesJson" . | quote }}
{{- end }}
kafka.bootstrap-servers: {{ .Values.kafka.bootstrapServers | quote }}
kafka.topic-prefix: {{ .Values.kafka.topicPrefix | quote }}
kafka.topic-partitions: {{ .Values.kafka.topicPartitions | int64 | quote }}
kafka.topic-replication-factor: {{ .Values.kafka.topicReplicationFactor | int64 | quote }}
kafka.request-timeout-ms: {{ .Values.kafka.requestTimeoutMs | int64 | quote }}
kafka.security-protocol: {{ .Values.kafka.securityProtocol | quote }}
{{- if .Values.kafka.tls.existingSecret }}
kafka.ssl-ca-file: "/etc/tidemark/kafka-tls/ca.crt"
{{- end }}
{{- if hasPrefix "SASL_" .Values.kafka.securityProtocol }}
kafka.sasl-mechanism: {{ .Values.kafka.sasl.mechanism | quote }}
kafka.sasl-username: {{ .Values.kafka.sasl.username | quote }}
kafka.sasl-password-file: "/etc/tidemark/kafka-sasl/password"
{{- end }}
cluster.name: {{ include "tidemark.clusterName" . | quote }}
cluster.port: {{ .Values.ports.hazelcast | int64 | quote }}
cluster.kubernetes-service-dns: {{ include "tidemark.clusterServiceDns" . | quote }}
cluster.join-wait-seconds: {{ .Values.cluster.joinWaitSeconds | int64 | quote }}
cluster.event-bus-port: {{ .Values.ports.eventBus | int64 | quote }}
bus.send-timeout-ms: {{ .Values.bus.sendTimeoutMs | int64 | quote }}
log.format: {{ .Values.log.format | quote }}
log.level: {{ .Values.log.level | quote }}
auth.enabled: "true"
{{- with .Values.http.publicUrl }}
http.public-url: {{ . | quote }}
{{- end }}
{{- if .Values.auth.oauth.issuer }}
auth.oauth.issuer: {{ .Values.auth.oauth.issuer | quote }}
auth.oauth.jwks-url: {{ .Values.auth.oauth.jwksUrl | quote }}
auth.oauth.audience: {{ .Values.auth.oauth.audience | quote }}
auth.oauth.role-claim: {{ .Values.auth.oauth.roleClaim | quote }}
auth.oauth.roles: {{ join "," .Values.auth.oauth.roles | quote }}
{{- end }}
{{- $ceilings := list }}
{{- range $role, $tools := .Values.auth.roleTools }}
{{- $ceilings = append $ceilings (printf "%s:%s" $role (join "|" $tools)) }}
{{- end }}
auth.role-tools: {{ join "," $ceilings | quote }}
auth.rate-limit.calls-per-minute: {{ .Values.auth.rateLimit.callsPerMinute | int64 | quote }}
auth.rate-limit.burst: {{ .Values.auth.rateLimit.burst | int64 | quote }}
{{- range $key, $value := .Values.extraConfig }}
{{ $key | quote }}: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/*
Deep merge of "over" into "base". Unlike mergeOverwrite, an explicit false or 0 wins;
an empty string, list or map keeps the base value.
*/}}
{{- define "tidemark.merge" -}}
{{- $base := .base -}}
{{- range $k, $v := .over -}}
{{- $b := index $base $k -}}
{{- if and (kindIs "map" $v) (kindIs "map" $b) -}}
{{- $_ := set $base $k (include "tidemark.merge" (dict "base" $b "over" $v) | fromYaml) -}}
{{- else if or (kindIs "bool" $v) (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v) (not (empty $v)) -}}
{{- $_ := set $base $k $v -}}
{{- end -}}
{{- end -}}
{{- toYaml $base -}}
{{- end -}}

{{/* A role's settings: the shared defaults with the role's block over them. */}}
{{- define "tidemark.roleValues" -}}
{{- $own := index .root.Values .role -}}
{{- $merged := include "tidemark.merge" (dict "base" (deepCopy .root.Values.defaults) "over" (omit (deepCopy $own) "extraEnv" "replicas" "autoscaling" "service" "ingress")) | fromYaml -}}
{{- $_ := set $merged "extraEnv" (concat (.root.Values.defaults.extraEnv | default list) ($own.extraEnv | default list)) -}}
{{- toYaml $merged -}}
{{- end -}}

{{/* Whether a role gets a PodDisruptionBudget: "true" or "". Every role does, one pod or many: a budget of
at least one pod can always be used, so it never blocks a drain (see the guide's "How the roles scale"). */}}
{{- define "tidemark.wantsPdb" -}}
{{- $cfg := include "tidemark.roleValues" . | fromYaml -}}
{{- if $cfg.podDisruptionBudget.enabled -}}
true
{{- end -}}
{{- end -}}

{{/* The role's spread over nodes and zones: its topologySpreadConstraints, each counting the role's own
pods unless it names a labelSelector, and the affinity with zoneSpread's preferred anti-affinity added. */}}
{{- define "tidemark.placement" -}}
{{- $cfg := .cfg -}}
{{- $selector := dict "matchLabels" (include "tidemark.roleSelectorLabels" .ctx | fromYaml) -}}
{{- $spread := list -}}
{{- range $cfg.topologySpreadConstraints -}}
{{- $c := deepCopy . -}}
{{- if not $c.labelSelector -}}
{{- $_ := set $c "labelSelector" $selector -}}
{{- end -}}
{{- $spread = append $spread $c -}}
{{- end -}}
{{- $affinity := deepCopy ($cfg.affinity | default dict) -}}
{{- $zone := $cfg.zoneSpread | default dict -}}
{{- if and $zone.topologyKey (gt (int $zone.weight) 0) -}}
{{- $anti := $affinity.podAntiAffinity | default dict -}}
{{- $term := dict "weight" (int $zone.weight) "podAffinityTerm" (dict "topologyKey" $zone.topologyKey "labelSelector" $selector) -}}
{{- $_ := set $anti "preferredDuringSchedulingIgnoredDuringExecution" (append ($anti.preferredDuringSchedulingIgnoredDuringExecution | default list) $term) -}}
{{- $_ := set $affinity "podAntiAffinity" $anti -}}
{{- end -}}
{{- $out := dict -}}
{{- with $spread }}{{ $_ := set $out "topologySpreadConstraints" . }}{{ end -}}
{{- with $affinity }}{{ $_ := set $out "affinity" . }}{{ end -}}
{{- with $out }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/* One role's Deployment: call with (dict "root" $ "role" "query"). */}}
{{- define "tidemark.deployment" -}}
{{- $root := .root -}}
{{- $role := .role -}}
{{- $own := index $root.Values $role -}}
{{- $cfg := include "tidemark.roleValues" . | fromYaml -}}
{{- $autoscaled := and (eq $role "gateway") $own.autoscaling.enabled -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "tidemark.fullname" $root }}-{{ $role }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "tidemark.roleLabels" . | nindent 4 }}
spec:
  {{- if not $autoscaled }}
  replicas: {{ $own.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  # One pod at a time, never below the wanted count: Hazelcast rebalances after each change.
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "tidemark.roleSelectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "tidemark.roleSelectorLabels" . | nindent 8 }}
        {{- include "tidemark.memberLabel" $root | nindent 8 }}
      annotations:
        checksum/config: {{ include "tidemark.configYaml" $root | sha256sum }}
        {{- with $cfg.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "tidemark.serviceAccountName" $root }}
      automountServiceAccountToken: {{ $root.Values.serviceAccount.automountToken }}
      terminationGracePeriodSeconds: {{ $cfg.terminationGracePeriodSeconds }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $cfg.podSecurityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: tidemark
          image: {{ include "tidemark.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: ["serve", "--roles", {{ $role | quote }}, "--config", "/etc/tidemark/tidemark.yaml"]
          ports:
            {{- if eq $role "gateway" }}
            - name: http
              containerPort: {{ $root.Values.ports.http }}
              protocol: TCP
            {{- end }}
            - name: ops
              containerPort: {{ $root.Values.ports.ops }}
              protocol: TCP
            - name: hazelcast
              containerPort: {{ $root.Values.ports.hazelcast }}
              protocol: TCP
            - name: eventbus
              containerPort: {{ $root.Values.ports.eventBus }}
              protocol: TCP
          env:
            - name: POD_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: TIDEMARK_NODE_ID
              value: "$(POD_NAME)"
            - name: TIDEMARK_CLUSTER_HOST
              value: "$(POD_IP)"
            - name: TIDEMARK_CLUSTER_EVENT_BUS_HOST
              value: "$(POD_IP)"
            {{- with $cfg.javaOpts }}
            - name: JAVA_TOOL_OPTIONS
              value: {{ . | quote }}
            {{- end }}
            {{- with $cfg.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          startupProbe:
            httpGet:
              path: /health/live
              port: ops
            {{- toYaml $cfg.startupProbe | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /health/live
              port: ops
            {{- toYaml $cfg.livenessProbe | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /health/ready
              port: ops
            {{- toYaml $cfg.readinessProbe | nindent 12 }}
          {{- with $cfg.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with $cfg.securityContext }}
          securityContext:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          volumeMounts:
            - name: config
              mountPath: /etc/tidemark/tidemark.yaml
              subPath: tidemark.yaml
              readOnly: true
            - name: database-password
              mountPath: /etc/tidemark/secrets
              readOnly: true
            {{- if $root.Values.database.callerPasswordsSecret }}
            - name: caller-passwords
              mountPath: /etc/tidemark/caller-passwords
              readOnly: true
            {{- end }}
            {{- include "tidemark.transportMounts" $root | nindent 12 }}
            {{- if $root.Values.namedTools }}
            {{- /* a folder, never a subPath: the kubelet updates a folder's files in place, and the node reloads them */}}
            - name: named-tools
              mountPath: /etc/tidemark/named-tools
              readOnly: true
            {{- end }}
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: config
          configMap:
            name: {{ include "tidemark.fullname" $root }}-config
        {{- if $root.Values.namedTools }}
        - name: named-tools
          configMap:
            name: {{ include "tidemark.fullname" $root }}-named-tools
        {{- end }}
        - name: database-password
          secret:
            secretName: {{ include "tidemark.databaseSecretName" $root }}
            defaultMode: 0440
            items:
              - key: {{ include "tidemark.databaseSecretKey" $root }}
                path: database-password
        {{- if $root.Values.database.callerPasswordsSecret }}
        - name: caller-passwords
          secret:
            secretName: {{ $root.Values.database.callerPasswordsSecret }}
            defaultMode: 0440
        {{- end }}
        {{- include "tidemark.transportVolumes" $root | nindent 8 }}
        - name: tmp
          emptyDir: {}
      {{- with $cfg.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $cfg.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with include "tidemark.placement" (dict "cfg" $cfg "ctx" .) }}
      {{- . | nindent 6 }}
      {{- end }}
{{- end -}}

{{/* One role's PodDisruptionBudget. */}}
{{- define "tidemark.pdb" -}}
{{- if include "tidemark.wantsPdb" . -}}
{{- $cfg := include "tidemark.roleValues" . | fromYaml -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "tidemark.fullname" .root }}-{{ .role }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "tidemark.roleLabels" . | nindent 4 }}
spec:
  maxUnavailable: {{ $cfg.podDisruptionBudget.maxUnavailable }}
  {{- if semverCompare ">=1.27-0" .root.Capabilities.KubeVersion.Version }}
  unhealthyPodEvictionPolicy: {{ $cfg.podDisruptionBudget.unhealthyPodEvictionPolicy }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "tidemark.roleSelectorLabels" . | nindent 6 }}
{{- end -}}
{{- end -}}
