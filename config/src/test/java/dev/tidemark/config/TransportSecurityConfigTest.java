package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS to PostgreSQL and TLS and SASL to Kafka: the keys, what they contradict, and what clients get. */
class TransportSecurityConfigTest {

  @TempDir
  Path dir;

  private Path file(String name) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, "-----BEGIN CERTIFICATE-----\n");
    return f;
  }

  private static String refusal(Map<ConfigKey, String> values) {
    return assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(values)).getMessage();
  }

  @Test
  void byDefaultNeitherPostgresqlNorKafkaUsesTls() {
    TidemarkConfig c = TidemarkConfig.from(Map.of());
    assertEquals(SslMode.DISABLE, c.database().connectOptions("u", "p", "a").getSslMode());
    assertEquals(Map.of("bootstrap.servers", "127.0.0.1:9092", "security.protocol", "PLAINTEXT"), c.kafka().clientProperties());
  }

  @Test
  void everyPostgresqlConnectionGetsTheModeAndTheRootCertificate() throws Exception {
    Path ca = file("ca.crt");
    TidemarkConfig c = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_SSL_MODE, "verify-full", ConfigKey.DATABASE_SSL_ROOT_CERT, ca.toString()));
    PgConnectOptions o = c.database().connectOptions("tidemark_reader", "pw", "tidemark-caller");
    assertEquals(SslMode.VERIFY_FULL, o.getSslMode());
    assertEquals("HTTPS", o.getSslOptions().getHostnameVerificationAlgorithm());
    assertEquals("tidemark_reader", o.getUser());
    TidemarkConfig ca2 = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_SSL_MODE, "verify-ca", ConfigKey.DATABASE_SSL_ROOT_CERT, ca.toString()));
    assertEquals("", ca2.database().connectOptions("u", "p", "a").getSslOptions().getHostnameVerificationAlgorithm(),
        "verify-ca checks the chain, not the host name");
    TidemarkConfig require = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_SSL_MODE, "require"));
    assertTrue(require.database().connectOptions("u", "p", "a").getSslOptions().isTrustAll(), "require encrypts without checking, as libpq's does");
  }

  @Test
  void anUnknownModeARootCertificateWithoutVerificationAndAMissingFileAreRefusedByName() throws Exception {
    assertTrue(refusal(Map.of(ConfigKey.DATABASE_SSL_MODE, "prefer")).contains("database.ssl-mode"));
    String contradiction = refusal(Map.of(ConfigKey.DATABASE_SSL_ROOT_CERT, file("ca.crt").toString()));
    assertTrue(contradiction.contains("database.ssl-root-cert") && contradiction.contains("database.ssl-mode"), contradiction);
    String missing = refusal(Map.of(ConfigKey.DATABASE_SSL_MODE, "verify-full", ConfigKey.DATABASE_SSL_ROOT_CERT, dir.resolve("nope.crt").toString()));
    assertTrue(missing.contains("database.ssl-root-cert") && missing.contains("nope.crt"), missing);
  }

  @Test
  void saslSslGivesEveryKafkaClientTheTrustStoreAndAJaasLineWithTheQuotesEscaped() throws Exception {
    Path ca = file("kafka-ca.crt");
    TidemarkConfig c = TidemarkConfig.from(Map.of(
        ConfigKey.KAFKA_SECURITY_PROTOCOL, "SASL_SSL",
        ConfigKey.KAFKA_SSL_CA_FILE, ca.toString(),
        ConfigKey.KAFKA_SASL_MECHANISM, "SCRAM-SHA-256",
        ConfigKey.KAFKA_SASL_USERNAME, "tidemark",
        ConfigKey.KAFKA_SASL_PASSWORD, "se\"cr\\et"));
    Map<String, Object> p = c.kafka().clientProperties();
    assertEquals("SASL_SSL", p.get("security.protocol"));
    assertEquals("PEM", p.get("ssl.truststore.type"));
    assertEquals(ca.toString(), p.get("ssl.truststore.location"));
    assertEquals("SCRAM-SHA-256", p.get("sasl.mechanism"));
    assertEquals("org.apache.kafka.common.security.scram.ScramLoginModule required username=\"tidemark\" password=\"se\\\"cr\\\\et\";",
        p.get("sasl.jaas.config"));
    assertFalse(c.kafka().toString().contains("cr"), "the config's text never holds the SASL password: " + c.kafka());
    assertFalse(c.toString().contains("se\"cr"), c.toString());
  }

  @Test
  void kafkaSettingsThatContradictTheProtocolOrLackWhatItNeedsAreRefusedByName() throws Exception {
    assertTrue(refusal(Map.of(ConfigKey.KAFKA_SECURITY_PROTOCOL, "TLS")).contains("kafka.security-protocol"));
    String ca = refusal(Map.of(ConfigKey.KAFKA_SSL_CA_FILE, file("ca.crt").toString()));
    assertTrue(ca.contains("kafka.ssl-ca-file") && ca.contains("kafka.security-protocol"), ca);
    String user = refusal(Map.of(ConfigKey.KAFKA_SECURITY_PROTOCOL, "SSL", ConfigKey.KAFKA_SASL_USERNAME, "tidemark"));
    assertTrue(user.contains("kafka.sasl-username") && user.contains("SSL"), user);
    assertTrue(refusal(Map.of(ConfigKey.KAFKA_SECURITY_PROTOCOL, "SASL_SSL", ConfigKey.KAFKA_SASL_PASSWORD, "x"))
        .contains("kafka.sasl-username"));
    assertTrue(refusal(Map.of(ConfigKey.KAFKA_SECURITY_PROTOCOL, "SASL_PLAINTEXT", ConfigKey.KAFKA_SASL_USERNAME, "u"))
        .contains("kafka.sasl-password"));
    assertTrue(refusal(Map.of(ConfigKey.KAFKA_SECURITY_PROTOCOL, "SASL_SSL", ConfigKey.KAFKA_SASL_MECHANISM, "GSSAPI",
        ConfigKey.KAFKA_SASL_USERNAME, "u", ConfigKey.KAFKA_SASL_PASSWORD, "p")).contains("kafka.sasl-mechanism"));
  }

  @Test
  void theSaslPasswordMayComeFromAMountedFile() throws Exception {
    Path pw = dir.resolve("sasl-password");
    Files.writeString(pw, "from-a-secret\n");
    TidemarkConfig c = ConfigLoader.load(null, Map.of(), Map.of(
        ConfigKey.KAFKA_SECURITY_PROTOCOL, "SASL_PLAINTEXT", ConfigKey.KAFKA_SASL_MECHANISM, "PLAIN",
        ConfigKey.KAFKA_SASL_USERNAME, "u", ConfigKey.KAFKA_SASL_PASSWORD_FILE, pw.toString()));
    assertTrue(((String) c.kafka().clientProperties().get("sasl.jaas.config")).contains("password=\"from-a-secret\""));
  }
}
