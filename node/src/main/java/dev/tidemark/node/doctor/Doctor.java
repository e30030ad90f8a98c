package dev.tidemark.node.doctor;

import dev.tidemark.database.Pools;
import dev.tidemark.auth.OAuth;
import dev.tidemark.contract.Role;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.ClusterConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.config.TidemarkConfig.KafkaConfig;
import dev.tidemark.database.Pools;
import dev.tidemark.node.migrate.CallerRoleCheck;
import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.database.schema.Migrator;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * What {@code tidemark doctor} checks, in order: PostgreSQL, Tidemark's schema and login, the
 * caller roles, what capture needs, Kafka (for a node that runs the changelog role), the cluster
 * and OAuth. Each check ends in one {@link Finding} that says what to fix; none changes anything.
 * It runs in the CLI's own thread, so it waits for each answer in turn.
 */
public final class Doctor {

  /** The oldest PostgreSQL Tidemark runs on (docs/guides/deploy-with-helm.md). */
  static final int MIN_POSTGRES = 150000;
  static final long WAIT_SECONDS = 15;
  /** How long a cluster member gets to accept a TCP connection before it counts as not answering. */
  static final int MEMBER_CONNECT_MILLIS = 2000;
  /** The cluster member tries its port and the 20 after it (ClusterSetup). */
  static final int CLUSTER_PORT_COUNT = 21;

  private final TidemarkConfig config;

  public Doctor(TidemarkConfig config) {
    this.config = config;
  }

  public List<Finding> run() {
    List<Finding> out = new ArrayList<>();
    Vertx vertx = Vertx.vertx();
    Finding issuer;
    try {
      for (DatabaseConfig db : config.databases()) {
        inDatabase(db, out, of -> postgres(vertx, db, of));
        if (db.separateChangelog()) {
          inDatabase(db, out, of -> changelogStore(vertx, db, of));
        }
      }
      issuer = oauth(vertx);
    } finally {
      vertx.close().await();
    }
    // the changelog role relays to the topic, the gateway and query roles read it (notifications, events); only the
    // command role never touches Kafka
    if (config.roles().contains(Role.CHANGELOG) || config.roles().contains(Role.GATEWAY) || config.roles().contains(Role.QUERY)) {
      kafka(config.kafka(), out);
    } else {
      out.add(Finding.skip("kafka", "this node runs " + config.roles() + ", which does not use Kafka"));
    }
    cluster(config.cluster(), out);
    out.add(issuer);
    return out;
  }

  // ---- OAuth ----

  private Finding oauth(Vertx vertx) {
    if (!config.oauth().enabled()) {
      return Finding.skip("oauth", "no auth.oauth.issuer is set, so only Tidemark's own tokens are accepted");
    }
    try {
      return Finding.ok("oauth", OAuth.describeIssuer(vertx, config.oauth()).timeout(WAIT_SECONDS, TimeUnit.SECONDS).await());
    } catch (RuntimeException e) {
      return Finding.fail("oauth", e.getMessage() + "; a node with this config would not start");
    }
  }

  // ---- PostgreSQL ----

  private static final String SERVER = """
      SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version,
             current_setting('wal_level') AS wal_level, current_user AS login,
             to_regclass('tidemark.schema_version') IS NOT NULL AS installed,
             has_database_privilege(current_database(), 'CREATE') AS may_create""";

  private static final String RIGHTS = """
      SELECT has_schema_privilege('tidemark', 'USAGE') AS schema_usage,
             has_table_privilege('tidemark.api_token', 'SELECT, INSERT, UPDATE, DELETE') AS tokens,
             has_table_privilege('tidemark.changelog', 'SELECT, DELETE') AS changelog,
             has_table_privilege('tidemark.changelog_state', 'SELECT, UPDATE') AS relay_state,
             (SELECT coalesce(max(version), 0) FROM tidemark.schema_version) AS schema_version,
             to_regclass('tidemark.changelog') IS NOT NULL AND to_regclass('tidemark.changelog_commit') IS NOT NULL AS capture""";

  /**
   * The findings {@code check} adds for {@code db}; those of a database other than the default name it
   * after the check ("postgres sales"), so that each database reads as its own block.
   */
  private void inDatabase(DatabaseConfig db, List<Finding> out, java.util.function.Consumer<List<Finding>> check) {
    List<Finding> of = new ArrayList<>();
    check.accept(of);
    boolean other = !db.name().equals(config.defaultDatabase().name());
    of.forEach(f -> out.add(other ? new Finding(f.status(), f.check() + " " + db.name(), f.message()) : f));
  }

  private void postgres(Vertx vertx, DatabaseConfig db, List<Finding> out) {
    String where = db.host() + ":" + db.port() + "/" + db.dbname() + " as " + db.user();
    PgConnection conn;
    Row server;
    try {
      conn = wait(PgConnection.connect(vertx, Pools.connectOptions(db)));
      server = wait(conn.query(SERVER).execute()).iterator().next();
    } catch (Exception e) {
      out.add(Finding.fail("postgres", "cannot connect to " + where + " (" + reason(e) + "): check database.url, database.user "
          + "and its password, and that PostgreSQL accepts connections from this host (pg_hba.conf)"));
      return;
    }
    try {
      int num = server.getInteger("num");
      out.add(num < MIN_POSTGRES
          ? Finding.fail("postgres", "PostgreSQL " + server.getString("version") + " at " + where + " is older than 15: upgrade it")
          : Finding.ok("postgres", "PostgreSQL " + server.getString("version") + " at " + where));
      // what migrate would refuse for, and what the relay needs on every start: each missing right with its statement
      int version = wait(Migrator.installedVersion(conn));
      List<String> missing = new ArrayList<>(wait(Migrator.installProblems(conn, version)));
      missing.addAll(wait(CaptureSetup.slotName(conn).compose(slot -> CaptureSetup.settings(conn, slot))
          .map(CaptureSetup::problems)));
      missing.forEach(p -> out.add(Finding.fail("rights", p)));
      if (missing.isEmpty()) {
        out.add(Finding.ok("rights", db.user() + " has what migrate and the capture need (CREATE on the database or its schema,"
            + " the caller roles, REPLICATION, a replication slot and a WAL sender)"));
      }
      if (!server.getBoolean("installed")) {
        out.add(Finding.fail("schema", "Tidemark's schema is not installed: run tidemark migrate"
            + (missing.isEmpty() ? "" : " once the rights above are given")));
        out.add(Finding.fail("capture", "the changelog is part of Tidemark's schema: run tidemark migrate"));
      } else {
        Row rights = wait(conn.query(RIGHTS).execute()).iterator().next();
        schema(rights.getInteger("schema_version"), out);
        login(db.user(), rights, out);
        out.add(rights.getBoolean("capture")
            ? Finding.ok("capture", "the changelog tables are installed")
            : Finding.fail("capture", "the changelog tables are missing: run tidemark migrate"));
      }
      String walLevel = server.getString("wal_level");
      out.add("logical".equals(walLevel)
          ? Finding.ok("wal_level", "logical, as the capture by logical decoding needs")
          : Finding.fail("wal_level", "is " + walLevel + "; the capture reads committed changes by logical decoding, which needs"
              + " logical: ALTER SYSTEM SET wal_level = logical, then restart PostgreSQL"));
    } catch (Exception e) {
      out.add(Finding.fail("schema", "cannot read Tidemark's schema (" + reason(e) + "): run tidemark migrate"));
    } finally {
      conn.close();
    }
    callerRoles(vertx, db, out);
    namedTools(vertx, db, out);
  }

  /**
   * The tools a team defines, checked as a node checks them when it loads them: each entry that
   * would not be served is a failure naming the entry and its fault.
   */
  private static void namedTools(Vertx vertx, DatabaseConfig db, List<Finding> out) {
    io.vertx.core.json.JsonObject section;
    String where = "database.";
    try {
      section = db.toolsFile().isEmpty() ? db.namedTools() : dev.tidemark.node.tools.NamedToolsLoader.parse(
          io.vertx.core.buffer.Buffer.buffer(java.nio.file.Files.readAllBytes(java.nio.file.Path.of(db.toolsFile()))));
      where = db.toolsFile().isEmpty() ? where : db.toolsFile() + ": ";
    } catch (IOException | IllegalArgumentException e) {
      out.add(Finding.fail("named-tools", "cannot read " + db.toolsFile() + " (database.tools-file): " + e.getMessage()));
      return;
    }
    if (section.isEmpty()) {
      out.add(Finding.skip("named-tools", "no tools are defined for this database (database.tools, database.tools-file)"));
      return;
    }
    java.util.Set<String> builtIns = new java.util.HashSet<>(dev.tidemark.contract.ToolCatalog.all().stream().map(t -> t.name()).toList());
    dev.tidemark.contract.NamedCatalog.Definitions defs = dev.tidemark.contract.NamedCatalog.parse(section, builtIns, where);
    Pool pool = Pools.create(vertx, db);
    try {
      Map<String, String> refused = wait(dev.tidemark.query.NamedToolCheck.check(vertx, db, pool, defs.tools()));
      dev.tidemark.contract.NamedCatalog catalog = dev.tidemark.contract.NamedCatalog.assemble(defs, refused, builtIns);
      catalog.faults().forEach(f -> out.add(Finding.fail("named-tools", f.describe() + "; the entry is not served (or served"
          + " without that part), the others are")));
      if (catalog.faults().isEmpty()) {
        out.add(Finding.ok("named-tools", catalog.tools().size() + " tools pass the load check: "
            + String.join(", ", catalog.tools().stream().map(t -> t.name()).toList())));
      }
    } catch (Exception e) {
      out.add(Finding.fail("named-tools", "cannot check the tools (" + reason(e) + ")"));
    } finally {
      pool.close();
    }
  }

  /** The changelog's own database (database.changelog-url): reachable, and holding the tables the relay stores into. */
  private void changelogStore(Vertx vertx, DatabaseConfig db, List<Finding> out) {
    DatabaseConfig store = db.changelogDatabase();
    String where = store.host() + ":" + store.port() + "/" + store.dbname() + " as " + store.user();
    PgConnection conn;
    try {
      conn = wait(PgConnection.connect(vertx, Pools.connectOptions(store)));
    } catch (Exception e) {
      out.add(Finding.fail("changelog-store", "cannot connect to " + where + " (" + reason(e) + "): check database.changelog-url,"
          + " and that PostgreSQL there accepts the login from this host; until it does, no change is stored and the slot keeps the WAL"));
      return;
    }
    try {
      Row r = wait(conn.query("SELECT to_regclass('tidemark.changelog_state') IS NOT NULL AND to_regclass('tidemark.changelog_relation')"
          + " IS NOT NULL AS ready, has_database_privilege(current_database(), 'CREATE') AS may_create").execute()).iterator().next();
      if (Boolean.TRUE.equals(r.getBoolean("ready"))) {
        out.add(Finding.ok("changelog-store", "the changelog is stored in " + where + " (database.changelog-url)"));
      } else if (Boolean.TRUE.equals(r.getBoolean("may_create"))) {
        out.add(Finding.warn("changelog-store", "the changelog's tables are not yet in " + where + ": tidemark migrate, or the"
            + " relay at its start, creates them"));
      } else {
        out.add(Finding.fail("changelog-store", store.user() + " may not create the changelog's tables in " + where + ": GRANT CREATE"
            + " ON DATABASE " + store.dbname() + " TO " + store.user()));
      }
    } catch (Exception e) {
      out.add(Finding.fail("changelog-store", "cannot read " + where + " (" + reason(e) + ")"));
    } finally {
      conn.close();
    }
  }

  private static void schema(int version, List<Finding> out) {
    int latest = Migrator.latestVersion();
    if (version == latest) {
      out.add(Finding.ok("schema", "Tidemark's schema is at version " + version + ", as this build needs"));
    } else if (version < latest) {
      out.add(Finding.fail("schema", "Tidemark's schema is at version " + version + ", this build needs " + latest
          + ": run tidemark migrate"));
    } else {
      out.add(Finding.fail("schema", "Tidemark's schema is at version " + version + ", newer than this build knows (" + latest
          + "): run a Tidemark at least as new as the one that migrated it"));
    }
  }

  private static void login(String user, Row rights, List<Finding> out) {
    List<String> missing = new ArrayList<>();
    for (String right : List.of("schema_usage", "tokens", "changelog", "relay_state")) {
      if (!rights.getBoolean(right)) {
        missing.add(right);
      }
    }
    out.add(missing.isEmpty()
        ? Finding.ok("login", user + " may use Tidemark's schema and tables")
        : Finding.fail("login", user + " lacks rights on Tidemark's schema (" + String.join(", ", missing)
            + "): run tidemark migrate as " + user + ", or GRANT ALL ON SCHEMA tidemark and ALL TABLES IN SCHEMA tidemark TO " + user));
  }

  private void callerRoles(Vertx vertx, DatabaseConfig db, List<Finding> out) {
    Pool pool = Pools.create(vertx, db);
    try {
      List<String> problems = wait(CallerRoleCheck.problems(pool, db.callerPasswords().keySet(), db.user(), db.schemas()));
      if (problems.isEmpty()) {
        out.add(Finding.ok("caller roles", "none of " + db.callerPasswords().keySet() + " and the roles tokens name can reach "
            + "past its grants"));
      }
      problems.forEach(p -> out.add(Finding.fail("caller roles", p)));
    } catch (Exception e) {
      out.add(Finding.fail("caller roles", "cannot check them (" + reason(e) + ")"));
    } finally {
      pool.close();
    }
    tokenRoles(vertx, db, out);
    for (Map.Entry<String, String> role : db.callerPasswords().entrySet()) {
      try {
        PgConnection c = wait(PgConnection.connect(vertx, Pools.connectOptions(db).setUser(role.getKey()).setPassword(role.getValue())));
        c.close();
        out.add(Finding.ok("caller login", role.getKey() + " logs in with its configured password"));
      } catch (Exception e) {
        out.add(Finding.fail("caller login", role.getKey() + " cannot log in (" + reason(e) + "): give it LOGIN and the password "
            + "database.caller-passwords or database.caller-password-dir holds"));
      }
    }
  }

  /** Every role an active token maps to must be one its caller can run statements as, or the token is refused every call. */
  private void tokenRoles(Vertx vertx, DatabaseConfig db, List<Finding> out) {
    PgConnection conn;
    try {
      conn = wait(PgConnection.connect(vertx, Pools.connectOptions(db)));
    } catch (Exception e) {
      return;  // said by the postgres check already
    }
    try {
      if (!wait(conn.query("SELECT to_regclass('tidemark.api_token') IS NOT NULL").execute()).iterator().next().getBoolean(0)) {
        return;
      }
      List<String> roles = new ArrayList<>();
      wait(conn.preparedQuery("SELECT DISTINCT pg_role FROM tidemark.api_token WHERE revoked_at IS NULL"
              + " AND (expires_at IS NULL OR expires_at > now()) AND ('*' = ANY(databases) OR $1 = ANY(databases)) ORDER BY 1")
          .execute(io.vertx.sqlclient.Tuple.of(db.name()))).forEach(r -> roles.add(r.getString(0)));
      for (String role : roles) {
        List<String> problems = wait(CallerRoleCheck.loginProblems(vertx, conn, db, role, false));
        problems.forEach(p -> out.add(Finding.fail("token roles", "tokens of role " + role + " are refused every call: " + p)));
        if (problems.isEmpty()) {
          out.add(Finding.ok("token roles", "tokens of role " + role + " can log in as it"));
        }
      }
    } catch (Exception e) {
      out.add(Finding.fail("token roles", "cannot read the roles tokens name (" + reason(e) + ")"));
    } finally {
      conn.close();
    }
  }

  // ---- Kafka ----

  private void kafka(KafkaConfig kafka, List<Finding> out) {
    int timeout = (int) Math.min(Integer.MAX_VALUE, kafka.requestTimeoutMs());
    // the same TLS and SASL settings the changelog role's clients use, so a pass here means they connect too
    Map<String, Object> props = kafka.clientProperties();
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
    try (Admin admin = Admin.create(props)) {
      List<Node> brokers;
      try {
        brokers = new ArrayList<>(admin.describeCluster().nodes().get(kafka.requestTimeoutMs(), TimeUnit.MILLISECONDS));
      } catch (Exception e) {
        out.add(Finding.fail("kafka", "cannot reach Kafka at " + kafka.bootstrapServers() + " (" + reason(e)
            + "): check kafka.bootstrap-servers and that the brokers listen there"));
        return;
      }
      out.add(Finding.ok("kafka", brokers.size() + " broker(s) answer at " + kafka.bootstrapServers()));
      for (DatabaseConfig db : config.databases()) {
        inDatabase(db, out, of -> topic(admin, kafka, db, brokers.size(), of));
      }
      shareGroups(admin, kafka, out);
    }
  }

  private void topic(Admin admin, KafkaConfig kafka, DatabaseConfig db, int brokers, List<Finding> out) {
    String topic = kafka.topicFor(db.name());
    try {
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(kafka.requestTimeoutMs(), TimeUnit.MILLISECONDS)
          .get(topic);
      out.add(Finding.ok("topic", topic + " has " + d.partitions().size() + " partition(s), replication factor "
          + d.partitions().get(0).replicas().size()));
    } catch (Exception e) {
      if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
        out.add(Finding.fail("topic", "cannot describe " + topic + " (" + reason(e) + "): grant this client Describe on it"));
      } else if (kafka.topicReplicationFactor() > brokers) {
        out.add(Finding.fail("topic", topic + " does not exist, and the changelog role cannot create it with replication factor "
            + kafka.topicReplicationFactor() + " on " + brokers + " broker(s): lower kafka.topic-replication-factor"));
      } else {
        out.add(Finding.warn("topic", topic + " does not exist yet; the changelog role creates it at start with "
            + kafka.topicPartitions() + " partition(s), or create it yourself"));
      }
    }
  }

  private static void shareGroups(Admin admin, KafkaConfig kafka, List<Finding> out) {
    String fix = ": Kafka 4.2 or later turns them on with kafka-features.sh --bootstrap-server " + kafka.bootstrapServers()
        + " upgrade --feature share.version=1";
    try {
      FeatureMetadata features = admin.describeFeatures().featureMetadata().get(kafka.requestTimeoutMs(), TimeUnit.MILLISECONDS);
      FinalizedVersionRange share = features.finalizedFeatures().get("share.version");
      out.add(share != null && share.maxVersionLevel() >= 1
          ? Finding.ok("share groups", "on (share.version " + share.maxVersionLevel() + ")")
          : Finding.fail("share groups", "off (share.version " + (share == null ? "not finalized" : share.maxVersionLevel()) + ")" + fix));
    } catch (Exception e) {
      out.add(Finding.fail("share groups", "cannot read the cluster's features (" + reason(e) + ")" + fix));
    }
  }

  // ---- the cluster ----

  private static void cluster(ClusterConfig cluster, List<Finding> out) {
    String bound = null;
    String lastError = "";
    for (int port = cluster.port(); port < cluster.port() + CLUSTER_PORT_COUNT && bound == null; port++) {
      try (ServerSocket s = new ServerSocket()) {
        s.bind(new InetSocketAddress(cluster.host(), port));
        bound = cluster.host() + ":" + port;
      } catch (IOException e) {
        lastError = e.getMessage();
      }
    }
    if (bound == null) {
      out.add(Finding.fail("cluster", "cannot bind cluster.host " + cluster.host() + " on ports " + cluster.port() + " to "
          + (cluster.port() + CLUSTER_PORT_COUNT - 1) + " (" + lastError + "): set cluster.host to an address of this machine, "
          + "or free one of those ports"));
      return;
    }
    if (!cluster.kubernetesServiceDns().isEmpty()) {
      try {
        int pods = InetAddress.getAllByName(cluster.kubernetesServiceDns()).length;
        out.add(Finding.ok("cluster", "can bind " + bound + "; " + cluster.kubernetesServiceDns() + " names " + pods + " pod(s)"));
      } catch (IOException e) {
        out.add(Finding.fail("cluster", "cannot resolve cluster.kubernetes-service-dns " + cluster.kubernetesServiceDns()
            + ": check the headless Service's name and namespace"));
      }
      return;
    }
    List<String> answering = new ArrayList<>();
    for (String member : cluster.members()) {
      int colon = member.lastIndexOf(':');
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(member.substring(0, colon), Integer.parseInt(member.substring(colon + 1))), MEMBER_CONNECT_MILLIS);
        answering.add(member);
      } catch (IOException | RuntimeException e) {
        // a member that does not answer is counted below
      }
    }
    out.add(answering.isEmpty()
        ? Finding.warn("cluster", "can bind " + bound + ", but none of cluster.members " + cluster.members()
            + " answers: this node would start a cluster of its own, which is right for the first node only")
        : Finding.ok("cluster", "can bind " + bound + "; " + answering.size() + " of " + cluster.members().size()
            + " member(s) answer " + answering));
  }

  private static <T> T wait(Future<T> future) {
    return future.timeout(WAIT_SECONDS, TimeUnit.SECONDS).await();
  }

  /** The cause's message, without the wrapping a future or a Kafka call adds. */
  private static String reason(Throwable e) {
    Throwable t = e;
    while ((t instanceof java.util.concurrent.ExecutionException || t instanceof java.util.concurrent.CompletionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
  }
}
