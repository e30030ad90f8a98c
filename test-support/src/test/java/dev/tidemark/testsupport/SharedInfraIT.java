package dev.tidemark.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(InfraExtension.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SharedInfraIT {

  private static SharedInfra fromBeforeAll;
  private static int firstPostgresPort;
  private static String firstBootstrap;

  private final SharedInfra fromConstructor;

  SharedInfraIT(SharedInfra infra) {
    this.fromConstructor = infra;
  }

  @BeforeAll
  static void up(SharedInfra infra) {
    fromBeforeAll = infra;
  }

  @Test
  @Order(1)
  void firstTestStartsWorkingPostgresAndKafka(SharedInfra infra) throws Exception {
    assertSame(fromBeforeAll, infra);
    assertSame(fromConstructor, infra);

    firstPostgresPort = infra.postgres().port();
    try (Connection c = DriverManager.getConnection(
            infra.postgres().jdbcUrl("postgres"), infra.postgres().user(), infra.postgres().password());
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT 1")) {
      rs.next();
      assertEquals(1, rs.getInt(1));
    }

    firstBootstrap = infra.kafkaBootstrapServers();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, firstBootstrap))) {
      assertNotNull(admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS));
    }
    assertEquals(expectedKafkaMode(), infra.kafkaMode());
  }

  @Test
  @Order(2)
  void secondTestGetsTheSameServers(SharedInfra infra) {
    assertSame(fromBeforeAll, infra);
    assertEquals(firstPostgresPort, infra.postgres().port());
    assertEquals(firstBootstrap, infra.kafkaBootstrapServers());
  }

  private static String expectedKafkaMode() {
    String external = System.getProperty("kafka.bootstrap.servers", System.getenv("KAFKA_BOOTSTRAP_SERVERS"));
    if (external != null && !external.isBlank()) {
      return SharedInfra.KAFKA_EXTERNAL;
    }
    // No Docker engine on the machines this suite is known to run on; elsewhere Testcontainers is also acceptable.
    return System.getenv("DOCKER_HOST") == null && !new java.io.File("/var/run/docker.sock").exists()
        ? SharedInfra.KAFKA_EMBEDDED
        : SharedInfra.KAFKA_TESTCONTAINERS;
  }
}
