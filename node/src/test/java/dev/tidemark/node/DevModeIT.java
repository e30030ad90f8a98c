package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.McpHttpClient;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar tidemark.jar dev} as a user runs it: a child process, read through its printed lines. */
class DevModeIT {

  static final Path JAR = Path.of("target", "tidemark.jar");
  private static final String TOKEN = "tmk_devModeItReadWriteToken0000000000000";

  /** A running dev process and the lines it printed once ready. */
  record Dev(Process process, List<String> raw, Map<String, String> lines, long readyMillis, Path log) {
    String value(String label) {
      return lines.get(label);
    }

    /** What the process wrote to its standard error so far. */
    String stderr() throws IOException {
      return Files.readString(log);
    }
  }

  /** Numbers each start's log: test classes of other JVMs start dev mode at the same time. */
  private static final java.util.concurrent.atomic.AtomicInteger STARTS = new java.util.concurrent.atomic.AtomicInteger();

  static Dev start(List<String> extra) throws IOException {
    return start(extra, Map.of());
  }

  static Dev start(List<String> extra, Map<String, String> environment) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        ProcessHandle.current().info().command().orElse("java"), "-Xmx768m", TestNodes.CLIENT_COMPILER,
        "-Djava.io.tmpdir=" + Path.of("target").toAbsolutePath(),
        "-jar", JAR.toString(), "dev",
        "--http-port", "0", "--ops-port", "0", "--cluster-port", String.valueOf(FreePorts.allocate())));
    cmd.addAll(extra);
    long started = System.nanoTime();
    Path log = Path.of("target", "dev-mode-" + ProcessHandle.current().pid() + "-" + STARTS.incrementAndGet() + ".log").toAbsolutePath();
    ProcessBuilder builder = new ProcessBuilder(cmd).redirectError(log.toFile());
    builder.environment().putAll(environment);
    Process process = builder.start();
    Map<String, String> lines = new LinkedHashMap<>();
    List<String> raw = new ArrayList<>();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      raw.add(line);
      int colon = line.indexOf(": ");
      if (colon > 0) {
        lines.put(line.substring(0, colon), line.substring(colon + 2));
      }
      if (line.startsWith("Started in")) {
        break;
      }
    }
    long readyMillis = (System.nanoTime() - started) / 1_000_000;
    assertTrue(lines.containsKey("Tidemark ready"), "dev mode printed " + lines + "; see " + log);
    System.out.println("dev mode ready in " + readyMillis + " ms (process start to ready line)");
    return new Dev(process, raw, lines, readyMillis, log);
  }

  static void stop(Dev dev) throws InterruptedException {
    dev.process().destroy(); // SIGTERM, as Ctrl-C or a container runtime would send
    assertTrue(dev.process().waitFor(60, TimeUnit.SECONDS), "dev mode stops within a minute of SIGTERM");
  }

  private static int pgPort(Dev dev) {
    return URI.create(dev.value("PostgreSQL")).getPort();
  }

  static Connection psql(Dev dev) throws Exception {
    URI uri = URI.create(dev.value("PostgreSQL"));
    String[] userInfo = uri.getUserInfo().split(":");
    return DriverManager.getConnection("jdbc:postgresql://" + uri.getHost() + ":" + uri.getPort() + uri.getPath(),
        userInfo[0], userInfo.length > 1 ? userInfo[1] : "");
  }

  private static boolean listening(int port) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      return true;
    } catch (ConnectException e) {
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void devModePrintsItsLinesServesBothCallersAndStopsEverythingOnSigterm() throws Exception {
    Dev dev = start(List.of("--token", TOKEN));
    try {
      List<String> prefixes = List.of("Tidemark ready: ", "Token: ", "Read-only token: ", "PostgreSQL: ");
      for (int i = 0; i < prefixes.size(); i++) {
        assertTrue(dev.raw().get(i).startsWith(prefixes.get(i)), "line " + i + " is " + dev.raw().get(i));
      }
      assertTrue(dev.value("Tidemark ready").matches("http://127\\.0\\.0\\.1:\\d+/mcp"), dev.value("Tidemark ready"));
      assertEquals(TOKEN, dev.value("Token"));
      assertTrue(dev.readyMillis() < 60_000, "ready in " + dev.readyMillis() + " ms");

      try (McpHttpClient rw = new McpHttpClient(dev.value("Tidemark ready"), TOKEN)) {
        rw.initialize();
        JsonObject status = rw.callTool("status", new JsonObject()).getJsonObject("structuredContent");
        assertEquals("read-write", status.getJsonObject("caller").getString("access"));
        assertEquals("tidemark_writer", status.getJsonObject("caller").getString("role"));
        assertTrue(status.getJsonObject("kafka").getBoolean("reachable"));
        assertTrue(status.getJsonObject("cluster").getBoolean("reachable"));
      }
      try (McpHttpClient ro = new McpHttpClient(dev.value("Tidemark ready"), dev.value("Read-only token"))) {
        ro.initialize();
        JsonObject status = ro.callTool("status", new JsonObject()).getJsonObject("structuredContent");
        assertEquals("read-only", status.getJsonObject("caller").getString("access"));
        assertEquals("tidemark_reader", status.getJsonObject("caller").getString("role"));
      }
      try (McpHttpClient stranger = new McpHttpClient(dev.value("Tidemark ready"), "tmk_someOtherToken00000000000000000")) {
        assertEquals(401, stranger.post(stranger.request("ping", null)).status(), "dev mode accepts only its tokens");
      }
      try (Connection conn = psql(dev); ResultSet rs = conn.createStatement().executeQuery(
          "SELECT (SELECT count(*) FROM customers), (SELECT count(*) FROM order_items), "
              + "(SELECT count(*) FROM information_schema.referential_constraints WHERE delete_rule IN ('CASCADE', 'SET NULL'))")) {
        rs.next();
        assertTrue(rs.getLong(1) >= 100 && rs.getLong(2) >= 1000, "a demo database of a few thousand rows");
        assertTrue(rs.getLong(3) >= 3, "foreign keys with ON DELETE CASCADE and SET NULL");
      }
    } finally {
      int pg = pgPort(dev);
      stop(dev);
      assertFalse(listening(pg), "the embedded PostgreSQL stopped with dev mode");
    }
    // what a newcomer would read as failures: none of it is one, and none of it is printed
    String stderr = dev.stderr();
    for (String noise : List.of("Java modular environment", "CP Subsystem", "57P01", "WARNING:", "Exception",
        "SLF4J", "metadata log appears to be empty", "already registered")) {
      assertFalse(stderr.contains(noise), "dev mode's standard error holds '" + noise + "':\n" + stderr);
    }
    assertTrue(stderr.lines().filter(l -> !l.isBlank()).allMatch(l -> l.matches("\\d{4}-\\d\\d-\\d\\dT.*")),
        "dev mode logs readable lines, each starting with its time:\n" + stderr);
    assertTrue(stderr.contains("drains: readiness is down") && stderr.contains("drained in"), "SIGTERM drains the node before it stops");
  }

  @Test
  void aMalformedTokenIsAUsageError() throws Exception {
    Process p = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar", JAR.toString(),
        "dev", "--token", "short").redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(2, p.exitValue(), output);
    assertTrue(output.contains("--token"), output);
  }

  @Test
  void devModeAppliesItsConfigFileAndTheEnvironmentOnTopOfItsOwnSettings(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("tidemark.yaml");
    Files.writeString(file, String.join("\n",
        "http:",
        "  path: /agents",
        "auth.role-tools: tidemark_reader:status",
        ""));
    // the environment wins over the file, as it does for tidemark serve
    Dev dev = start(List.of("--config", file.toString()), Map.of("TIDEMARK_AUTH_ROLE_TOOLS", "tidemark_reader:status|list_tables"));
    try {
      assertTrue(dev.value("Tidemark ready").endsWith("/agents"), "the file's http.path: " + dev.value("Tidemark ready"));
      try (McpHttpClient reader = new McpHttpClient(dev.value("Tidemark ready"), dev.value("Read-only token"))) {
        reader.initialize();
        List<String> names = new ArrayList<>();
        reader.rpc("tools/list", new JsonObject()).getJsonObject("result").getJsonArray("tools")
            .forEach(t -> names.add(((JsonObject) t).getString("name")));
        // the ceiling holds the built-in tools; the demo's named tools are granted by their own roles
        assertEquals(List.of("status", "list_tables", "open_tickets_of_customer", "customer_card"), names,
            "the environment's ceiling for the reader's role, and the named tools its role is given");
      }
      try (McpHttpClient writer = new McpHttpClient(dev.value("Tidemark ready"), dev.value("Token"))) {
        writer.initialize();
        assertTrue(writer.rpc("tools/list", new JsonObject()).getJsonObject("result").getJsonArray("tools").size() > 2,
            "a role the ceiling does not name keeps every tool");
      }
    } finally {
      stop(dev);
    }
  }

  @Test
  void aConfigFileCannotPointDevModeAwayFromItsOwnDatabase(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("tidemark.yaml");
    Files.writeString(file, "database.url: postgresql://db.example:5432/app\n");
    Process p = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar", JAR.toString(),
        "dev", "--config", file.toString()).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(2, p.exitValue(), output);
    assertTrue(output.contains("database.url") && output.contains("--database-url"), output);
    Files.writeString(file, "http.no-such-key: 1\n");
    Process unknown = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar", JAR.toString(),
        "dev", "--config", file.toString()).redirectErrorStream(true).start();
    String said = new String(unknown.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(unknown.waitFor(60, TimeUnit.SECONDS));
    assertEquals(2, unknown.exitValue(), said);
    assertTrue(said.contains("http.no-such-key"), said);
  }
}
