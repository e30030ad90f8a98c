package dev.tidemark.config;

import java.util.Locale;

/**
 * Every configuration key, declared once with its default and documentation. A key is read from
 * the config file (dotted, as written here), then from the environment ({@link #envName()}), then
 * from command-line flags; the last one found wins. docs/configuration.md lists them all, and a
 * test keeps the page and this enum equal.
 */
public enum ConfigKey {
  NODE_ID("node.id", "", "This node's id in logs, status and the cluster. Empty: the host name and a random suffix."),
  NODE_EVENT_LOOPS("node.event-loops", "0", "Event-loop threads of this node. 0: one per CPU core the JVM sees."),
  NODE_QUERY_INSTANCES("node.query-instances", "0", "Instances of the read tools' service on a node with the query role, each on its own event loop with its share of database.pool-size. 0: one per event loop. At most database.pool-size."),
  NODE_COMMAND_INSTANCES("node.command-instances", "0", "Instances of the change tools' service on a node with the command role, each on its own event loop with its share of database.pool-size. 0: one per event loop. At most database.pool-size."),
  NODE_GATEWAY_INSTANCES("node.gateway-instances", "0", "Instances of the MCP endpoint on a node with the gateway role, each on its own event loop, all listening on http.port: Vert.x hands each new connection to the next instance. 0: one per event loop."),
  NODE_DRAIN_TIMEOUT_MS("node.drain-timeout-ms", "15000", "Longest a stopping node waits for its calls in flight to finish before it ends them and leaves the cluster."),
  ROLES("roles", "gateway,query,command,changelog", "Comma-separated roles this node runs: gateway, query, command, changelog."),

  HTTP_HOST("http.host", "0.0.0.0", "Address the MCP endpoint listens on."),
  HTTP_PORT("http.port", "8080", "Port of the MCP endpoint (gateway role)."),
  HTTP_PATH("http.path", "/mcp", "Path of the MCP endpoint; /{path}/{database} serves a named database."),
  HTTP_MAX_BODY_BYTES("http.max-body-bytes", "4194304", "Largest request body accepted; larger bodies get 413."),
  HTTP_BODY_TIMEOUT_MS("http.body-timeout-ms", "30000", "Longest a client may take to send a request body once its headers arrived; slower bodies get 408."),
  HTTP_IDLE_TIMEOUT_SECONDS("http.idle-timeout-seconds", "60", "A connection that sends nothing for this long is closed; this is also the deadline for a request's headers. Open SSE streams stay alive with comments every 15 s."),
  HTTP_MAX_CONNECTIONS("http.max-connections", "1000", "Authenticated connections one gateway node holds open, across its instances; a connection counts once a request of it passed the credential check. Past it, that request gets 503 and its connection is closed."),
  HTTP_MAX_UNAUTHENTICATED_CONNECTIONS("http.max-unauthenticated-connections", "256", "Connections one gateway node holds open, across its instances, that have not passed a credential check yet, counted apart from http.max-connections; past it, the one that has waited longest is closed."),
  HTTP_ALLOWED_ORIGINS("http.allowed-origins", "", "Comma-separated Origin values allowed besides loopback origins; a request with any other Origin gets 403."),
  HTTP_PUBLIC_URL("http.public-url", "", "The origin clients reach the endpoint at, as scheme://host[:port] without a path (https://tidemark.example.com): the endpoint's public URL is this followed by http.path, and /{database} for a named database. Each such URL is the OAuth resource its metadata document names and, by default, the audience its tokens must carry. Required with auth.oauth.issuer."),

  OPS_HOST("ops.host", "0.0.0.0", "Address of the operations endpoint (/health/live, /health/ready, /metrics)."),
  OPS_PORT("ops.port", "9090", "Port of the operations endpoint, served by every node whatever its roles."),

  DATABASE_NAME("database.name", "main", "Name of the default database; clients reach it at /mcp and /mcp/{name}."),
  DATABASE_URL("database.url", "postgresql://127.0.0.1:5432/postgres", "PostgreSQL server and database, as postgresql://host:port/dbname."),
  DATABASE_CHANGELOG_URL("database.changelog-url", "", "Tidemark's own database for the changelog, as postgresql://host:port/dbname (reached with database.user, its password and database.ssl-mode): the capture stores every decoded change there, and changes_since, watch, restore_rows, undo_transaction and the audit read it there, so the served database's server only decodes. Put it on another server to take the changelog's writes off the served one. Empty: the changelog is stored in the served database (dev mode). docs/changelog.md#where-the-changelog-is-stored."),
  DATABASE_USER("database.user", "tidemark", "The login Tidemark uses for its own schema (tokens, changelog, idempotency keys, keys). No caller statement ever runs under it: see database.caller-passwords."),
  DATABASE_PASSWORD("database.password", "", "Password of database.user. Prefer database.password-file or the environment."),
  DATABASE_PASSWORD_FILE("database.password-file", "", "A file whose content is the password (a mounted Secret); overrides database.password."),
  DATABASE_CALLER_PASSWORDS("database.caller-passwords", "", "Comma-separated role:password pairs: the login password of each PostgreSQL role callers map to. Caller statements run on connections that log in as the caller's role itself, so no statement can switch to a role with more rights. A password may not contain a comma; prefer database.caller-password-dir."),
  DATABASE_CALLER_PASSWORD_DIR("database.caller-password-dir", "", "A folder with one file per caller role, named after the role, whose content is that role's login password (a mounted Secret). Read at start; a role named here and in database.caller-passwords takes the file."),
  DATABASE_SSL_MODE("database.ssl-mode", "disable", "TLS to PostgreSQL: disable; require (encrypted, the server's certificate not checked); verify-ca (it must chain to database.ssl-root-cert, or to the JVM's trusted authorities when that is empty); verify-full (and name the host of database.url)."),
  DATABASE_SSL_ROOT_CERT("database.ssl-root-cert", "", "A PEM file of the certificate authorities that may sign PostgreSQL's server certificate, for verify-ca and verify-full (a mounted Secret)."),
  DATABASE_POOL_SIZE("database.pool-size", "8", "Connections per pool, node, database and caller role; a query node has a second pool of this size per caller role whose statements stay prepared. docs/security.md works out the connection budget."),
  DATABASE_POOL_WAIT_MS("database.pool-wait-ms", "3000", "Longest a call waits for a free connection of its pool before it fails with UNAVAILABLE (retriable), having run nothing. Keep it and database.statement-timeout-ms together under bus.send-timeout-ms, so that a call that waited still answers before its gateway stops waiting."),
  DATABASE_CALLER_SHARE_PERCENT("database.caller-share-percent", "50", "The most of a caller role's connections one caller may hold at once, in percent of each pool (database.pool-size, shared out between a node's service instances), and at least one connection: a caller past it waits for one of its own calls to end, and when a pool is full the callers that wait take turns. A call that waits database.pool-wait-ms fails with UNAVAILABLE naming the limit and when to retry. 100: a caller may take the whole pool."),
  DATABASE_SCHEMAS("database.schemas", "public", "Comma-separated schemas whose tables Tidemark serves."),
  DATABASE_APPROVAL_TABLES("database.approval-tables", "", "Comma-separated tables (schema.name, or name in any served schema) whose changes need a person's approval: a committed plan that touches one becomes a proposal, decided with tidemark proposals."),
  DATABASE_UNPLANNED_TABLES("database.unplanned-tables", "", "Comma-separated served tables (schema.name, a name in any served schema, schema.* or *) that change tools never change: they carry no plan trigger, so the statements of their other writers pay nothing for Tidemark's plans. A change of a change tool (insert_rows, update_rows, delete_rows, execute, a named tool, a restore) that writes rows of one of them, itself or through a cascade or a trigger, is refused before anything is written (TABLE_UNPLANNED). Their changes are still captured, read and delivered as every served table's. The changelog role applies a change of it at its next reconcile."),
  DATABASE_KEY_ONLY_TABLES("database.key-only-tables", "", "Comma-separated served tables (schema.name, a name in any served schema, schema.* or *) whose updates and deletes write only their primary key to the WAL (REPLICA IDENTITY DEFAULT) instead of the whole old row: their changes carry the old row's key alone, and restore_rows and undo_transaction refuse to put back what they updated or deleted (BEFORE_IMAGE_MISSING). Every other table, and a named one without a primary key, keeps full before-images (REPLICA IDENTITY FULL). The changelog role applies a change of it at its next reconcile."),
  DATABASE_APPROVERS("database.approvers", "", "Comma-separated people who may approve and reject any proposal of this database in the console: a token's name (a person who signs in with that token) or oauth:<subject> (a person of auth.oauth.issuer). A decision is recorded with the person's name."),
  DATABASE_TABLE_APPROVERS("database.table-approvers", "", "People who may decide proposals of single tables in the console, as table:person|person pairs separated by commas (table as in database.approval-tables; a person as in database.approvers). They may decide a proposal when every table it touches names them."),
  DATABASE_REVIEWED_FUNCTIONS("database.reviewed-functions", "", "Comma-separated functions (schema.name, every overload; or schema.* for every function of a schema) whose bodies the operator has read and vouches for: the function check takes each as changing nothing beyond a statement, with everything it calls. Any other function of the database whose body PostgreSQL keeps as text (PL/pgSQL, a quoted SQL body, another language), or that is VOLATILE, is refused wherever a caller's statement would reach it: called, in a trigger, a default, a constraint, an index, a policy. See docs/security.md."),
  DATABASE_STATEMENT_TIMEOUT_MS("database.statement-timeout-ms", "5000", "Longest a caller's statement may run before it ends with TIMEOUT."),
  DATABASE_CATALOG_CACHE_MS("database.catalog-cache-ms", "5000", "Longest get_row, list_rows and the row change tools reuse what they learned of a table's shape, and query a statement's parameter types and the names of the types of the database's own it returns, and the function check what it found harmless; a schema change notice drops them sooner. 0: look them up on every call."),
  DATABASE_TOOLS("database.tools", "", "Tools a team defines for this database: a list of entries, each a name, title, description, kind (read or change), one statement with $1... placeholders, parameters, the roles that see it and, for a read tool, columns and limit (docs/guides/named-tools.md). In the file a YAML list; in TIDEMARK_DATABASE_TOOLS a JSON array. Read at start; use database.tools-file to change them without a restart."),
  DATABASE_TOOLSETS("database.toolsets", "", "Named groups of tools, each served alone at /mcp/{database}/{toolset}: a mapping of toolset name to a list of tool names (named or built-in). In the file a YAML mapping; in TIDEMARK_DATABASE_TOOLSETS a JSON object."),
  DATABASE_CONSUMERS("database.consumers", "", "Events consumers whose events arrive with context and reactions: a list of entries, each a consumer name, its context (named read tools, each with arguments mapping a parameter to a column of the event's row) and its reactions (named change tools). In the file a YAML list; in TIDEMARK_DATABASE_CONSUMERS a JSON array."),
  DATABASE_TOOLS_FILE("database.tools-file", "", "A YAML file holding tools, toolsets and consumers as database.tools, database.toolsets and database.consumers do, at its top level. Every node with the gateway or query role reads it again when it changes (checked every 2 s) and serves the new tools without a restart. Set either this or the three keys, not both."),
  DATABASES("databases", "", "Further databases the cluster serves, each at /mcp/{name} with its own pools, changelog and topic: a list of entries, each setting database.* keys without the database. prefix (name and url at least) and taking the rest from database.*. In the file a YAML list; in TIDEMARK_DATABASES a JSON array of the same entries."),

  KAFKA_BOOTSTRAP_SERVERS("kafka.bootstrap-servers", "127.0.0.1:9092", "Kafka brokers, as host:port pairs separated by commas."),
  KAFKA_TOPIC_PREFIX("kafka.topic-prefix", "tidemark.changelog.", "Prefix of each database's changelog topic; the database name follows it."),
  KAFKA_TOPIC_PARTITIONS("kafka.topic-partitions", "1", "Partitions of a changelog topic Tidemark creates."),
  KAFKA_TOPIC_REPLICATION_FACTOR("kafka.topic-replication-factor", "1", "Replication factor of a changelog topic Tidemark creates."),
  KAFKA_REQUEST_TIMEOUT_MS("kafka.request-timeout-ms", "5000", "How long a call to Kafka may take before it counts as unreachable."),
  KAFKA_SECURITY_PROTOCOL("kafka.security-protocol", "PLAINTEXT", "How Tidemark's Kafka clients reach the brokers: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."),
  KAFKA_SSL_CA_FILE("kafka.ssl-ca-file", "", "A PEM file of the certificate authorities that may sign the brokers' certificates, for SSL and SASL_SSL; empty: the JVM's trusted authorities. The broker's host name is always checked."),
  KAFKA_SASL_MECHANISM("kafka.sasl-mechanism", "SCRAM-SHA-512", "The SASL mechanism for SASL_PLAINTEXT and SASL_SSL: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."),
  KAFKA_SASL_USERNAME("kafka.sasl-username", "", "The SASL user name, for SASL_PLAINTEXT and SASL_SSL."),
  KAFKA_SASL_PASSWORD("kafka.sasl-password", "", "The SASL password. Prefer kafka.sasl-password-file or the environment."),
  KAFKA_SASL_PASSWORD_FILE("kafka.sasl-password-file", "", "A file whose content is the SASL password (a mounted Secret); overrides kafka.sasl-password."),

  CLUSTER_NAME("cluster.name", "tidemark", "Name of the Vert.x cluster; nodes with other names never join it."),
  CLUSTER_HOST("cluster.host", "127.0.0.1", "Address this node's cluster member binds and announces."),
  CLUSTER_PORT("cluster.port", "5701", "First port the cluster member tries; the next 20 are tried when it is taken."),
  CLUSTER_MEMBERS("cluster.members", "127.0.0.1:5701", "Comma-separated host:port of members to join (TCP-IP discovery)."),
  CLUSTER_KUBERNETES_SERVICE_DNS("cluster.kubernetes-service-dns", "", "A headless Service's DNS name; when set, members are found through it instead of cluster.members."),
  CLUSTER_JOIN_WAIT_SECONDS("cluster.join-wait-seconds", "0", "Seconds a starting member waits before it joins or forms the cluster; raise it to batch joins in large clusters."),
  CLUSTER_EVENT_BUS_HOST("cluster.event-bus-host", "", "Address of the event-bus server; empty: the cluster member's address."),
  CLUSTER_EVENT_BUS_PORT("cluster.event-bus-port", "0", "Port of the event-bus server; 0 picks a free one."),

  KEYS_REFRESH_SECONDS("keys.refresh-seconds", "10", "How often a node reloads the key ring (tidemark.key_ring) that signs and encrypts cursors, plan ids and caller identities; a key added by tidemark keys rotate is used for signing only after twice this long, so that every node knows it first."),

  RESOURCES_MAX_SUBSCRIPTIONS_PER_SESSION("resources.max-subscriptions-per-session", "100", "Resources one 2025-11-25 session, or one 2026-07-28 subscriptions/listen stream, may subscribe to at once. A resources/subscribe past it, or a listen stream that names more, is refused with JSON-RPC error -32030 naming this key; unsubscribe from one first."),
  RESOURCES_MAX_SUBSCRIPTIONS_PER_CALLER("resources.max-subscriptions-per-caller", "1000", "Resource subscriptions one caller may hold at once across the cluster, its sessions and listen streams together. Past it a subscription is refused with JSON-RPC error -32030 naming this key. A session's subscriptions count until it ends or expires, a listen stream's until it closes (within a minute when its gateway died)."),

  TASKS_TTL_MS("tasks.ttl-ms", "3600000", "How long a task of the io.modelcontextprotocol/tasks extension, and its result, is kept from its creation when its tools/call asks for no ttl: past it tasks/get answers as for an unknown task, and a call still running is cancelled. A task that follows a proposal is kept for tasks.max-ttl-ms, since a person decides in their own time."),
  TASKS_MAX_TTL_MS("tasks.max-ttl-ms", "604800000", "The longest a task is kept: a ttl a tools/call asks for (task.ttl, in milliseconds) is cut to it, and a task that follows a proposal gets it. At least tasks.ttl-ms."),
  TASKS_PROMOTE_AFTER_MS("tasks.promote-after-ms", "1000", "How long a call of query, explain with analyze, migrate or restore_rows whose client declared the tasks extension may run before it answers with a task instead of waiting; a call that ends sooner answers with its result. 0: such calls always answer with a task."),
  TASKS_POLL_INTERVAL_MS("tasks.poll-interval-ms", "1000", "The pollIntervalMs a running task suggests to its client; a task that follows a proposal suggests five times as long."),

  BUS_SEND_TIMEOUT_MS("bus.send-timeout-ms", "10000", "Longest a gateway waits for a service's reply before the call fails with UNAVAILABLE."),

  AUTH_ENABLED("auth.enabled", "true", "Require a bearer token on every MCP request. false is refused unless http.host is a loopback address; it exists for local conformance runs."),
  AUTH_ANONYMOUS_ROLE("auth.anonymous-role", "tidemark_reader", "With auth.enabled false, the PostgreSQL role of the one anonymous read-only caller. It needs a login in database.caller-passwords like every caller role; it is never database.user."),
  AUTH_MAX_CONCURRENT_CALLS("auth.max-concurrent-calls", "32", "Tool calls one caller may have running at once on one gateway node, across its instances; more wait in a queue."),
  AUTH_MAX_QUEUED_CALLS("auth.max-queued-calls", "64", "Tool calls of one caller that may wait on one gateway node for a free slot; a call that finds the queue full ends at once with UNAVAILABLE."),
  AUTH_RATE_LIMIT_CALLS_PER_MINUTE("auth.rate-limit.calls-per-minute", "0", "Tool calls one caller may make per minute across all gateways of the cluster; a call past it is answered with HTTP 429 and Retry-After. 0: no limit."),
  AUTH_RATE_LIMIT_BURST("auth.rate-limit.burst", "0", "Most tool calls one caller may make at once within auth.rate-limit.calls-per-minute: the budget is counted in windows of 60 x burst / calls-per-minute seconds, burst calls each. 0: the whole minute's budget (one-minute windows)."),
  AUTH_QUEUE_TIMEOUT_MS("auth.queue-timeout-ms", "5000", "Longest a queued tool call waits for a free slot before it ends with UNAVAILABLE."),
  AUTH_ROLE_TOOLS("auth.role-tools", "", "The tool ceiling of each PostgreSQL role, as role:tool|tool pairs separated by commas (role:* for every tool). A caller of a role named here sees and calls only those tools, whatever its token or scopes; any other tool answers as unknown. A role not named here has no ceiling. The ceiling holds the built-in tools; the tools a team defines are granted by their own roles."),
  AUTH_OAUTH_ISSUER("auth.oauth.issuer", "", "The OAuth 2.1 authorization server whose JWT access tokens the endpoint accepts, as its issuer identifier (the iss claim). Empty: no OAuth, only tmk_ tokens. Its metadata and keys are fetched at start; a node that cannot fetch them does not start."),
  AUTH_OAUTH_JWKS_URL("auth.oauth.jwks-url", "", "Where the issuer's signing keys (a JWKS) are fetched. Empty: the jwks_uri of the issuer's metadata (/.well-known/oauth-authorization-server, else /.well-known/openid-configuration)."),
  AUTH_OAUTH_AUDIENCE("auth.oauth.audience", "", "The audience (aud) every access token must name, on every endpoint. Empty: each endpoint's own public URL (http.public-url and the path), the RFC 8707 resource indicator."),
  AUTH_OAUTH_ROLE_CLAIM("auth.oauth.role-claim", "pg_role", "The claim naming the caller's PostgreSQL role: a string, or an array holding exactly one of auth.oauth.roles."),
  AUTH_OAUTH_ROLES("auth.oauth.roles", "", "Comma-separated PostgreSQL roles an access token may name; a token naming any other role is refused with 401. Required with auth.oauth.issuer."),
  AUTH_OAUTH_LEEWAY_SECONDS("auth.oauth.leeway-seconds", "30", "Clock difference allowed between the issuer and this node when exp, nbf and iat are checked."),
  AUTH_OAUTH_JWKS_REFRESH_SECONDS("auth.oauth.jwks-refresh-seconds", "60", "A token signed with a key id the node does not know makes it fetch the keys again, at most once in this many seconds."),
  AUTH_OAUTH_JWKS_MAX_AGE_SECONDS("auth.oauth.jwks-max-age-seconds", "3600", "The keys are fetched again this often in any case, so that a key the issuer withdrew stops verifying."),

  CHANGELOG_RETENTION_SECONDS("changelog.retention-seconds", "604800", "How long a published change stays in the changelog table; older cursors get CURSOR_EXPIRED."),
  CHANGELOG_PRUNE_INTERVAL_SECONDS("changelog.prune-interval-seconds", "60", "How often the publishing relay deletes changes older than changelog.retention-seconds."),
  CHANGELOG_RELAY_BATCH_SIZE("changelog.relay-batch-size", "5000", "Most changes the relay reads and publishes to Kafka at once."),
  CHANGELOG_RELAY_BATCH_BYTES("changelog.relay-batch-bytes", "33554432", "Most bytes of before and after images the relay reads and publishes to Kafka at once; a batch holds at least one change whatever its size."),
  CHANGELOG_RELAY_POLL_MS("changelog.relay-poll-ms", "1000", "How often the relay looks for changes when no commit woke it, and how often a standby relay tries to take over."),
  CHANGELOG_RECONCILE_SECONDS("changelog.reconcile-seconds", "30", "How often the changelog role publishes new tables (and gives them plan triggers), for databases without the DDL event trigger."),
  CHANGELOG_MAX_SLOT_LAG_BYTES("changelog.max-slot-lag-bytes", "1073741824", "WAL the replication slot may hold back (bytes not yet decoded and stored) before readiness reports the changelog down and the relay logs an error; keep it well below the host's free disk."),

  PLAN_TTL_SECONDS("plan.ttl-seconds", "600", "How long a plan id may be committed after the plan; later it is INVALID_PLAN."),
  IDEMPOTENCY_RETENTION_HOURS("idempotency.retention-hours", "24", "How long the outcome of a commit is kept under its idempotency key; a retry after that runs as a new commit."),
  LOG_FORMAT("log.format", "text", "text: one readable line per message; json: one JSON object per line with the request, session, caller and trace ids (the Helm chart's default)."),
  LOG_LEVEL("log.level", "info", "The level of Tidemark's own messages: error, warn, info, debug or trace. The libraries it uses log warnings and errors whatever this says."),

  TRACING_OTLP_ENDPOINT("tracing.otlp-endpoint", "", "The OTLP/HTTP (protobuf) URL spans are exported to, such as http://otel-collector:4318/v1/traces. Empty: nothing is exported, but each call still joins the traceparent it was sent, passes its trace on to the service and PostgreSQL, and logs its trace id."),
  TRACING_SAMPLE_RATIO("tracing.sample-ratio", "1.0", "Share of calls without a traceparent whose spans are exported, from 0 to 1. A call with a traceparent follows its sampled flag."),
  TRACING_SERVICE_NAME("tracing.service-name", "tidemark", "The service.name of this node's spans; each node also names itself by node.id in service.instance.id."),

  WATCH_MAX_WAITING_PER_CALLER("watch.max-waiting-per-caller", "16", "watch calls with wait_ms one caller may have waiting at once on one node with the query role; one more is LIMIT_EXCEEDED, naming when one of them answers at the latest."),
  WATCH_MAX_WAITING_PER_SESSION("watch.max-waiting-per-session", "8", "watch calls with wait_ms one MCP session (2025-11-25) may have waiting at once on one gateway; one more is LIMIT_EXCEEDED."),

  COMMAND_DIRECT_COMMIT_ROLES("command.direct-commit-roles", "", "Comma-separated PostgreSQL roles whose callers may commit a change that removes nothing in one call, without a plan_id (an idempotency_key is still required)."),
  COMMAND_MIGRATE_ROLES("command.migrate-roles", "", "Comma-separated PostgreSQL roles whose read-write callers see and may call the migrate tool (schema changes). Empty: nobody may."),

  EVENTS_MAX_DELIVERIES("events.max-deliveries", "5", "Deliveries of an event, from 1 to 9, after which it is dead-lettered instead of delivered again; with Tidemark's own dead letters the share group's delivery limit is one above it (the broker allows 2 to 10)."),
  EVENTS_CONSUMERS_PER_NODE("events.consumers-per-node", "8", "Kafka share consumers one node keeps for one events consumer: each holds one lease at a time, so this bounds the leases a node holds at once per consumer."),
  EVENTS_BROKER_DEAD_LETTERS("events.broker-dead-letters", "true", "Dead-letter events in the broker's own dead-letter topic of each share group (KIP-1191) when the broker has it (share.version 2, Kafka 4.4); false, or a broker without it: Tidemark dead-letters them itself."),
  EVENTS_MAX_CONSUMERS_PER_CALLER("events.max-consumers-per-caller", "20", "Events consumers one caller may have in a database; events_next that would create one more is LIMIT_EXCEEDED. A consumer counts until it is removed (events.consumer-idle-seconds, or tidemark consumers delete)."),
  EVENTS_MAX_CONSUMERS_PER_ROLE("events.max-consumers-per-role", "200", "Events consumers the callers of one PostgreSQL role may have in a database, together; events_next that would create one more is LIMIT_EXCEEDED."),
  EVENTS_CONSUMER_IDLE_SECONDS("events.consumer-idle-seconds", "604800", "An events consumer that no events tool call used for this long is removed, with its share group, its dead-letter topic and its dead letters; one node removes it. A later events_next of its name creates it anew. 0: never. Keep it well above the longest pause of your workers."),
  EVENTS_CONSUMER_SWEEP_SECONDS("events.consumer-sweep-seconds", "60", "How often each node with the query role looks for events consumers to remove (idle ones, and those tidemark consumers delete marked)."),
  EVENTS_MAX_WORKERS_PER_CALLER("events.max-workers-per-caller", "16", "Kafka share consumers one caller's events consumers may hold open at once on one node, over all of them (two threads each); at the cap the caller's share consumer idle longest closes to make room, and when all hold leases events_next is UNAVAILABLE naming the cap and when the first lease ends."),
  EVENTS_WORKER_IDLE_SECONDS("events.worker-idle-seconds", "60", "A Kafka share consumer that served no call for this long is closed, releasing its two threads, its broker connection and its place in the group; the next events_next opens one again (its first poll takes about one group heartbeat)."),
  EVENTS_ADMIN_ROLES("events.admin-roles", "", "Comma-separated PostgreSQL roles whose callers are events administrators: they may call events_seek."),

  CONSOLE_ENABLED("console.enabled", "false", "Serve the console for people (approvals, the audit trail, the agents at work, tokens) on every gateway, at console.path. tidemark dev turns it on."),
  CONSOLE_PATH("console.path", "/console", "Path of the console on the gateway's port; it may not be or lie under http.path."),
  CONSOLE_ADMINISTRATORS("console.administrators", "", "Comma-separated people who administer the console: a token's name or oauth:<subject>. Where no auth.oauth.issuer is configured, only their tokens sign in; they see the agents at work and list, create and revoke tokens."),
  CONSOLE_SESSION_SECONDS("console.session-seconds", "28800", "How long a console sign-in lasts; one made through auth.oauth.issuer ends earlier, when its access token expires. Signing out ends it at once, on every node."),
  CONSOLE_OAUTH_CLIENT_ID("console.oauth-client-id", "", "The console's client id at auth.oauth.issuer: a public client that signs people in with the authorization code flow and PKCE, and whose redirect URI is http.public-url, console.path and /oauth/callback. Required with console.enabled and auth.oauth.issuer.");

  private final String key;
  private final String defaultValue;
  private final String doc;

  ConfigKey(String key, String defaultValue, String doc) {
    this.key = key;
    this.defaultValue = defaultValue;
    this.doc = doc;
  }

  public String key() {
    return key;
  }

  public String defaultValue() {
    return defaultValue;
  }

  public String doc() {
    return doc;
  }

  /** {@code TIDEMARK_} and the key in upper case, with dots and dashes as underscores. */
  public String envName() {
    return "TIDEMARK_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /**
   * A server that could not listen on {@code host:port}, which this key sets, as one sentence that names the key and the
   * fix; a start that fails this way stops the node (the command exits with status 2), whatever else it had started.
   */
  public IllegalStateException listenFailure(String host, int port, Throwable err) {
    Throwable root = err;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String why = root instanceof java.net.BindException || String.valueOf(root.getMessage()).contains("in use")
        ? "the address is in use by another program (or another Tidemark node)"
        : String.valueOf(root.getMessage());
    return new IllegalStateException("cannot listen on " + host + ":" + port + " (" + key + ", " + envName() + "): " + why
        + "; stop what uses it, or set " + key + " to a free port", err);
  }

  public static ConfigKey byKey(String key) {
    for (ConfigKey k : values()) {
      if (k.key.equals(key)) {
        return k;
      }
    }
    return null;
  }
}
