package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.devstack.EmbeddedKafkaBroker;
import dev.tidemark.devstack.EmbeddedPostgresServer;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tidemark's connections to a PostgreSQL server and a Kafka broker that require TLS (and SASL for
 * Kafka), built from the config keys an operator sets. The certificates under test resources
 * {@code tls/} are for tests only: a CA, a server certificate for localhost and 127.0.0.1 signed by
 * it, and an unrelated CA; made with openssl, valid for 100 years.
 */
class TransportSecurityIT {

  @TempDir
  static Path tls;

  private static EmbeddedPostgresServer postgres;
  private static EmbeddedKafkaBroker kafka;
  private static Vertx vertx;

  @BeforeAll
  static void start() throws Exception {
    for (String f : List.of("ca.crt", "other-ca.crt", "server.crt", "server.key", "server.pem")) {
      try (InputStream in = TransportSecurityIT.class.getResourceAsStream("/tls/" + f)) {
        Files.copy(in, tls.resolve(f), StandardCopyOption.REPLACE_EXISTING);
      }
    }
    // PostgreSQL refuses a key file that others may read
    Files.setPosixFilePermissions(tls.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
    postgres = EmbeddedPostgresServer.start(null, Map.of(
        "ssl", "on",
        "ssl_cert_file", tls.resolve("server.crt").toString(),
        "ssl_key_file", tls.resolve("server.key").toString()));
    kafka = EmbeddedKafkaBroker.start(null, Map.of(
        "ssl.keystore.type", "PEM",
        "ssl.keystore.location", tls.resolve("server.pem").toString(),
        "listener.name.sasl_ssl.sasl.enabled.mechanisms", "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_tidemark=\"s3cret\";"),
        List.of("SASL_SSL"));
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void stop() throws Exception {
    if (vertx != null) {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    if (kafka != null) {
      kafka.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  private static TidemarkConfig config(Map<ConfigKey, String> keys) {
    Map<ConfigKey, String> all = new HashMap<>(keys);
    all.put(ConfigKey.DATABASE_URL, postgres.url("postgres"));
    all.put(ConfigKey.DATABASE_USER, postgres.user());
    all.put(ConfigKey.DATABASE_PASSWORD, postgres.password());
    return TidemarkConfig.from(all);
  }

  /** Whether the connection a pool of this config opens is encrypted, as PostgreSQL itself reports it. */
  private static boolean encrypted(TidemarkConfig config) throws Exception {
    Pool pool = Pools.create(vertx, config.database());
    try {
      return pool.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").execute()
          .map(rows -> rows.iterator().next().getBoolean(0))
          .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      pool.close();
    }
  }

  @Test
  void verifyFullConnectsOverTlsToAServerWhoseCertificateChainsToTheRootCertificate() throws Exception {
    assertTrue(encrypted(config(Map.of(ConfigKey.DATABASE_SSL_MODE, "verify-full",
        ConfigKey.DATABASE_SSL_ROOT_CERT, tls.resolve("ca.crt").toString()))));
    assertTrue(encrypted(config(Map.of(ConfigKey.DATABASE_SSL_MODE, "require"))), "require encrypts too");
    assertEquals(false, encrypted(config(Map.of())), "disable, the default, does not");
  }

  @Test
  void verifyFullRefusesAServerWhoseCertificateAnotherAuthoritySigned() {
    ExecutionException e = assertThrows(ExecutionException.class, () -> encrypted(config(Map.of(
        ConfigKey.DATABASE_SSL_MODE, "verify-full", ConfigKey.DATABASE_SSL_ROOT_CERT, tls.resolve("other-ca.crt").toString()))));
    String why = String.valueOf(e.getCause());
    assertTrue(why.contains("certification path") || why.contains("PKIX") || why.contains("SSL"), why);
  }

  private static TidemarkConfig kafkaConfig(String password) {
    return TidemarkConfig.from(Map.of(
        ConfigKey.KAFKA_BOOTSTRAP_SERVERS, kafka.bootstrapServers("SASL_SSL"),
        ConfigKey.KAFKA_SECURITY_PROTOCOL, "SASL_SSL",
        ConfigKey.KAFKA_SSL_CA_FILE, tls.resolve("ca.crt").toString(),
        ConfigKey.KAFKA_SASL_MECHANISM, "PLAIN",
        ConfigKey.KAFKA_SASL_USERNAME, "tidemark",
        ConfigKey.KAFKA_SASL_PASSWORD, password));
  }

  @Test
  void kafkaClientsReachASaslSslListenerWithTheConfiguredCredentials() throws Exception {
    Map<String, Object> props = kafkaConfig("s3cret").kafka().clientProperties();
    try (Admin admin = Admin.create(props)) {
      String clusterId = admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
      assertTrue(!clusterId.isEmpty());
    }
  }

  @Test
  void aWrongSaslPasswordIsAnAuthenticationFailure() {
    Map<String, Object> props = kafkaConfig("wrong").kafka().clientProperties();
    try (Admin admin = Admin.create(props)) {
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof SaslAuthenticationException, String.valueOf(e.getCause()));
    }
  }
}
