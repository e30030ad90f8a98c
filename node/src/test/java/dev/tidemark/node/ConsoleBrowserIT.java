package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.LocalIssuer;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console in a real browser: Debian's headless Chromium, driven by Selenium through Debian's
 * chromedriver (both installed by .ci/run), against one node whose people sign in with a local
 * OAuth issuer (authorization code with PKCE). One browser session for the whole class: a person
 * signs in, approves a proposal and sees the row written, rejects one and the agent reads the
 * reason, filters the audit trail and undoes a transaction, looks at the agents at work, and makes
 * and revokes a token, after which the agent's next call is refused. Each page's screenshot is
 * written to target/console-screenshots, or to the folder {@code -Dtidemark.console.screenshots}
 * names: {@code ../docs/guides/console} renews the pictures of the console's guide.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserIT {

  static final String DB = "console_browser_it";
  /** Not the guide's folder by default: a test run leaves the sources as they were. */
  static final Path SHOTS = Path.of(System.getProperty("tidemark.console.screenshots", "target/console-screenshots"));
  static final Duration WAIT = Duration.ofSeconds(30);

  private SharedInfra infra;
  private LocalIssuer issuer;
  private TidemarkNode node;
  private McpHttpClient agent;
  private WebDriver browser;
  private java.util.concurrent.CompletableFuture<WebDriver> starting;
  private String base;
  private Path profile;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.bt_salary, public.bt_note CASCADE",
        "CREATE TABLE public.bt_salary (id int PRIMARY KEY, name text NOT NULL, amount int NOT NULL, note text)",
        "CREATE TABLE public.bt_note (id int PRIMARY KEY, body text)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.bt_salary, public.bt_note TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])",
        "INSERT INTO public.bt_salary VALUES (1, 'Ada', 4200, 'reviewed in June'), (2, 'Grace', 4800, NULL)");
    // the browser starts while the node does: each takes seconds, mostly waiting
    profile = Files.createTempDirectory("console-browser-profile");
    starting = java.util.concurrent.CompletableFuture.supplyAsync(() -> chromium(profile));
    issuer = LocalIssuer.start("k1");
    issuer.signInAs("alice", "tidemark_writer", "tidemark:read tidemark:write");
    int port = FreePorts.allocate();
    base = "http://127.0.0.1:" + port;
    Map<ConfigKey, String> settings = new EnumMap<>(ConfigKey.class);
    settings.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    settings.put(ConfigKey.HTTP_PORT, String.valueOf(port));
    settings.put(ConfigKey.HTTP_PUBLIC_URL, base);
    settings.put(ConfigKey.AUTH_OAUTH_ISSUER, issuer.url());
    settings.put(ConfigKey.AUTH_OAUTH_ROLES, "tidemark_writer,tidemark_reader");
    settings.put(ConfigKey.DATABASE_APPROVAL_TABLES, "bt_salary");
    settings.put(ConfigKey.CHANGELOG_RELAY_POLL_MS, "200");
    settings.put(ConfigKey.CONSOLE_ENABLED, "true");
    settings.put(ConfigKey.CONSOLE_OAUTH_CLIENT_ID, "tidemark-console");
    settings.put(ConfigKey.CONSOLE_ADMINISTRATORS, "oauth:alice");
    settings.put(ConfigKey.DATABASE_APPROVERS, "oauth:alice");
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", settings);
    agent = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
    browser = starting.join();
    Files.createDirectories(SHOTS);

    browser.get(base + "/console");
    waitFor(d -> d.getCurrentUrl().endsWith("/console/sign-in"));
    shot("sign-in");
    browser.findElement(By.id("oauth-sign-in")).click();
    waitFor(d -> d.getCurrentUrl().contains("/console/approvals") && !d.findElements(By.cssSelector(".person")).isEmpty());
    assertEquals("oauth:alice", browser.findElement(By.cssSelector(".person")).getText());
    assertEquals(1, issuer.exchanges(), "one code exchanged, with its PKCE verifier");
  }

  /** Debian's chromium and chromedriver, with the flags this machine's closed network needs. */
  static WebDriver chromium(Path profile) {
    File driver = new File("/usr/bin/chromedriver");
    File binary = new File("/usr/bin/chromium");
    if (!driver.canExecute() || !binary.canExecute()) {
      throw new IllegalStateException("the browser test needs Debian's chromium and chromium-driver (apt-get install chromium"
          + " chromium-driver; .ci/run installs them)");
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(binary);
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1280,1400",
        "--user-data-dir=" + profile.toAbsolutePath());
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver).usingAnyFreePort().build();
    return new ChromeDriver(service, options);
  }

  @AfterAll
  void stop() {
    if (browser == null && starting != null) {
      // the node failed to start while the browser did: quit it all the same
      browser = starting.exceptionally(err -> null).join();
    }
    if (browser != null) {
      browser.quit();
    }
    if (agent != null) {
      agent.close();
    }
    TestNodes.stop(node);
    if (issuer != null) {
      issuer.close();
    }
    if (profile != null) {
      try (java.util.stream.Stream<Path> files = Files.walk(profile)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      } catch (java.io.IOException e) {
        // a profile folder left in the temp folder holds nothing another test reads
      }
    }
  }

  private void waitFor(java.util.function.Function<WebDriver, Boolean> condition) {
    try {
      new WebDriverWait(browser, WAIT).until(condition::apply);
    } catch (org.openqa.selenium.TimeoutException e) {
      throw new AssertionError("the page did not come to what was waited for; it is " + browser.getCurrentUrl() + ":\n"
          + browser.getPageSource(), e);
    }
  }

  private void shot(String name) throws java.io.IOException {
    byte[] png = ((org.openqa.selenium.TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES);
    Files.write(SHOTS.resolve(name + ".png"), png);
  }

  private String propose(int id, int amount, String note) {
    JsonObject args = new JsonObject().put("table", "bt_salary").put("key", id)
        .put("set", new JsonObject().put("amount", amount).put("note", note));
    JsonObject plan = ToolResults.ok(agent, "update_rows", args);
    return ToolResults.ok(agent, "update_rows", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString())).getString("proposal_id");
  }

  private WebElement find(String css) {
    return browser.findElement(By.cssSelector(css));
  }

  @Test
  @Order(1)
  void approvingAProposalWritesTheRowShown() throws Exception {
    String id = propose(1, 4600, "raise <b>approved</b> by the board");
    browser.get(base + "/console/approvals");
    WebElement proposal = find("section[data-proposal='" + id + "']");
    List<String> changed = proposal.findElements(By.cssSelector("table.row tr.changed")).stream().map(e -> e.getAttribute("data-column")).toList();
    assertEquals(List.of("amount", "note"), changed);
    assertEquals("raise <b>approved</b> by the board", proposal.findElement(By.cssSelector("tr[data-column='note'] td:nth-of-type(2)")).getText(),
        "the agent's text, shown as text");
    assertTrue(proposal.findElements(By.tagName("b")).isEmpty());
    shot("approvals");
    proposal.findElement(By.cssSelector("form.approve button")).click();
    waitFor(d -> !d.findElements(By.cssSelector("section.decision[data-status='applied']")).isEmpty());
    assertEquals(4600, ToolResults.ok(agent, "get_row", new JsonObject().put("table", "bt_salary").put("key", 1))
        .getJsonObject("row").getInteger("amount"), "the row is written");
  }

  @Test
  @Order(2)
  void rejectingAProposalTellsTheAgentWhy() {
    String id = propose(2, 9900, "double it");
    browser.get(base + "/console/approvals");
    WebElement proposal = find("section[data-proposal='" + id + "']");
    proposal.findElement(By.cssSelector("form.reject textarea")).sendKeys("Raises wait for the March review.");
    proposal.findElement(By.cssSelector("form.reject button")).click();
    waitFor(d -> !d.findElements(By.cssSelector("section.decision[data-status='rejected']")).isEmpty());
    JsonObject seen = ToolResults.ok(agent, "status", new JsonObject().put("proposal", id)).getJsonObject("proposal");
    assertEquals("rejected", seen.getString("status"));
    assertEquals("Raises wait for the March review.", seen.getString("reason"));
    assertEquals("oauth:alice", seen.getString("decided_by"));
  }

  @Test
  @Order(3)
  void theAuditTrailFiltersToATransactionThatIsThenUndone() throws Exception {
    JsonObject args = new JsonObject().put("table", "bt_note").put("rows", new JsonArray()
        .add(new JsonObject().put("id", 9).put("body", "posted by mistake")));
    JsonObject plan = ToolResults.ok(agent, "insert_rows", args);
    ToolResults.ok(agent, "insert_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", "note-9"));
    Await.that("the audit trail, filtered, shows the insert", WAIT, () -> {
      browser.get(base + "/console/audit");
      find("form.filter input[name='table']").sendKeys("bt_note");
      find("form.filter input[name='caller']").sendKeys("dev-read-write");
      new Select(find("form.filter select[name='tool']")).selectByValue("insert_rows");
      find("form.filter button").click();
      return !browser.findElements(By.cssSelector("section.transaction")).isEmpty();
    });
    assertTrue(browser.getCurrentUrl().contains("table=bt_note"), browser.getCurrentUrl());
    WebElement tx = find("section.transaction");
    assertEquals("note-9", tx.findElement(By.cssSelector("dd[data-fact='idempotency key']")).getText());
    assertEquals(1, browser.findElements(By.cssSelector("section.transaction")).size(), "only the insert matches");
    shot("audit");
    tx.findElement(By.cssSelector("a.undo")).click();
    waitFor(d -> !d.findElements(By.cssSelector("section.undo-plan form.confirm-undo")).isEmpty());
    assertTrue(find("section.undo-plan .warning").getText().contains("removes rows"), "the consent it asks for");
    shot("undo");
    find("form.confirm-undo button").click();
    waitFor(d -> !d.findElements(By.cssSelector("section.undo-done[data-mode='commit']")).isEmpty());
    assertEquals("NOT_FOUND", ToolResults.error(agent, "get_row", new JsonObject().put("table", "bt_note").put("key", 9), "NOT_FOUND")
        .getString("code"), "the undo deleted the inserted row");
  }

  @Test
  @Order(4)
  void theAgentsAtWorkShowEachCallersCallsAndSessions() throws Exception {
    Await.that("the agent's calls are counted", WAIT, () -> {
      browser.get(base + "/console/agents");
      return !browser.findElements(By.cssSelector("table.callers tr[data-caller='dev-read-write']")).isEmpty();
    });
    WebElement row = find("table.callers tr[data-caller='dev-read-write']");
    List<WebElement> cells = row.findElements(By.tagName("td"));
    assertTrue(Integer.parseInt(cells.get(1).getText()) >= 1, "its session: " + row.getText());
    assertTrue(cells.get(3).getText().contains("update_rows"), "its calls per tool: " + row.getText());
    shot("agents");
  }

  @Test
  @Order(5)
  void aTokenMadeInTheConsoleWorksUntilItIsRevokedThere() throws Exception {
    browser.get(base + "/console/tokens");
    find("form.create-token input[name='name']").sendKeys("report-bot");
    new Select(find("form.create-token select[name='role']")).selectByValue("tidemark_writer");
    find("form.create-token button").click();
    waitFor(d -> !d.findElements(By.cssSelector("code.secret")).isEmpty());
    String token = find("code.secret").getText();
    try (McpHttpClient bot = TestNodes.connect(node, token)) {
      ToolResults.ok(bot, "status", new JsonObject());
      browser.get(base + "/console/tokens");
      shot("tokens");
      find("tr[data-token='report-bot'] form.revoke button").click();
      waitFor(d -> !d.findElements(By.cssSelector("section.revoked")).isEmpty());
      Await.that("the bot's next call is refused", WAIT, () -> bot.post(new JsonObject().put("jsonrpc", "2.0").put("id", 9)
          .put("method", "tools/call").put("params", new JsonObject().put("name", "status").put("arguments", new JsonObject()))).status() == 401);
    }
  }
}
