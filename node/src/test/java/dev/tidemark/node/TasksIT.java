package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.OutputSchemas;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tasks of the {@code io.modelcontextprotocol/tasks} extension for what waits, as an agent's client
 * that declared the extension meets them: a commit to a protected table answers with a task that
 * completes when a person decides, a long query goes on as a task that {@code tasks/cancel} stops
 * in PostgreSQL, a task id that is unknown, expired or another caller's is refused alike, and a
 * task outlives the node that started it.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TasksIT {

  static final String DB = "tasks_it";

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient agent;
  private Map<ConfigKey, String> settings;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.tk_salary CASCADE",
        "CREATE TABLE public.tk_salary (id int PRIMARY KEY, amount int NOT NULL)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.tk_salary TO tidemark_writer",
        "GRANT CREATE ON SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    int port = dev.tidemark.devstack.FreePorts.allocate();
    settings = TestNodes.config(infra, TestNodes.clusterName(), port, "127.0.0.1:" + port, "gateway,query,command,changelog");
    settings.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    settings.put(ConfigKey.DATABASE_APPROVAL_TABLES, "tk_salary");
    settings.put(ConfigKey.COMMAND_MIGRATE_ROLES, "tidemark_writer");
    settings.put(ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "60000");
    settings.put(ConfigKey.CHANGELOG_RELAY_POLL_MS, "200");
    node = TestNodes.startCaughtUp(settings);
    agent = TaskCalls.connect(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);
  }

  @AfterAll
  void stop() {
    if (agent != null) {
      agent.close();
    }
    TestNodes.stop(node);
  }

  @BeforeEach
  void seed() {
    sql(infra, DB, "TRUNCATE public.tk_salary", "INSERT INTO public.tk_salary VALUES (1, 100), (2, 200)");
  }

  private List<String> amounts() {
    return ChangelogFixtures.strings(infra, DB, "SELECT id || ':' || amount FROM public.tk_salary ORDER BY id");
  }

  /** Plans a raise and commits it: a change to the protected table, so the commit answers with a task. */
  private JsonObject proposeRaise(int id, int amount) {
    JsonObject args = new JsonObject().put("table", "tk_salary").put("key", id).put("set", new JsonObject().put("amount", amount));
    JsonObject plan = ToolResults.ok(agent, "update_rows", args);
    return TaskCalls.created(agent, "update_rows", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()));
  }

  @Test
  void aCommitThatBecomesAProposalIsATaskThatCompletesWithTheCommitOnceAPersonApproves() throws Exception {
    JsonObject created = proposeRaise(1, 150);
    assertEquals("working", created.getString("status"));
    assertFalse(created.containsKey("result") || created.containsKey("structuredContent"), created::encode);
    String taskId = created.getString("taskId");
    String proposal = TaskCalls.proposalOf(created);

    JsonObject waiting = TaskCalls.get(agent, taskId);
    assertEquals("working", waiting.getString("status"), waiting::encode);
    assertEquals(5000L, waiting.getLong("pollIntervalMs"), "a person decides: polled less often than a statement");
    assertEquals(List.of("1:100", "2:200"), amounts(), "nothing is written before a person approves");

    JsonObject decided = TaskCalls.decide(settings, p -> p.approve(proposal, "ada"));
    assertEquals("applied", decided.getString("status"), decided::encode);
    JsonObject done = TaskCalls.get(agent, taskId);
    assertEquals("completed", done.getString("status"), done::encode);
    JsonObject result = done.getJsonObject("result");
    assertNull(result.getValue("isError"), result::encode);
    JsonObject commit = result.getJsonObject("structuredContent");
    OutputSchemas.assertFits("update_rows", commit);
    assertEquals("commit", commit.getString("mode"), "the commit's outcome, as the change tool answers a commit");
    assertEquals(1, commit.getJsonObject("totals").getInteger("updated"));
    assertEquals(List.of("1:150", "2:200"), amounts());
    assertEquals(done, TaskCalls.get(agent, taskId), "a finished task answers the same until it expires");
  }

  @Test
  void aRejectedProposalsTaskCompletesWithTheReasonAsAToolErrorAndNothingWritten() throws Exception {
    JsonObject created = proposeRaise(2, 900);
    String proposal = TaskCalls.proposalOf(created);
    TaskCalls.decide(settings, p -> p.reject(proposal, "bob", "over the band for this grade"));
    JsonObject done = TaskCalls.get(agent, created.getString("taskId"));
    assertEquals("completed", done.getString("status"), "a decision is the tool's answer, not a protocol failure: " + done.encode());
    JsonObject result = done.getJsonObject("result");
    assertEquals(true, result.getBoolean("isError"), result::encode);
    JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
    OutputSchemas.assertFits("update_rows", result.getJsonObject("structuredContent"));
    assertEquals("PROPOSAL_REJECTED", error.getString("code"), error::encode);
    assertTrue(error.getString("message").contains("over the band for this grade"), error::encode);
    assertEquals(proposal, error.getString("proposal_id"));
    assertEquals(List.of("1:100", "2:200"), amounts());
  }

  @Test
  void aLongQueryGoesOnAsATaskAndTasksCancelStopsItsStatementInPostgres() {
    String marker = "tasks_it_cancel_" + UUID.randomUUID().toString().substring(0, 8);
    JsonObject created = TaskCalls.created(agent, "query", new JsonObject().put("sql", "SELECT pg_sleep(50) AS " + marker));
    String taskId = created.getString("taskId");
    Await.that("the query to sleep in PostgreSQL", Duration.ofSeconds(20), () -> TaskCalls.running(infra, DB, marker));
    JsonObject working = TaskCalls.get(agent, taskId);
    assertEquals("working", working.getString("status"), working::encode);
    assertTrue(working.getString("statusMessage").startsWith("query has run for "), "its progress: " + working.encode());

    JsonObject ack = agent.rpc("tasks/cancel", new JsonObject().put("taskId", taskId)).getJsonObject("result");
    assertEquals(new JsonObject().put("resultType", "complete"), ack, "an empty acknowledgement");
    Await.that("the statement to be cancelled in PostgreSQL", Duration.ofSeconds(10), () -> !TaskCalls.running(infra, DB, marker));
    JsonObject cancelled = TaskCalls.get(agent, taskId);
    assertEquals("cancelled", cancelled.getString("status"), cancelled::encode);
    assertFalse(cancelled.containsKey("result"), cancelled::encode);
    assertEquals(ack, agent.rpc("tasks/cancel", new JsonObject().put("taskId", taskId)).getJsonObject("result"),
        "cancelling an ended task is acknowledged the same");
  }

  @Test
  void anExplainWithAnalyzeThatRunsLongCompletesAsATaskWithItsPlan() {
    JsonObject created = TaskCalls.created(agent, "explain", new JsonObject().put("sql", "SELECT pg_sleep(2)").put("analyze", true));
    JsonObject done = TaskCalls.awaitStatus(agent, created.getString("taskId"), "completed", Duration.ofSeconds(30));
    JsonObject result = done.getJsonObject("result");
    assertNull(result.getValue("isError"), result::encode);
    OutputSchemas.assertFits("explain", result.getJsonObject("structuredContent"));
  }

  @Test
  void aMigratePlanThatWaitsForALockCompletesAsATaskWithItsPlan() throws Exception {
    sql(infra, DB, "DROP TABLE IF EXISTS public.tk_lock", "CREATE TABLE public.tk_lock (id int PRIMARY KEY)",
        "ALTER TABLE public.tk_lock OWNER TO tidemark_writer");
    JsonObject args = new JsonObject().put("statements", new io.vertx.core.json.JsonArray().add("ALTER TABLE public.tk_lock ADD COLUMN note text"));
    JsonObject created;
    // the ALTER waits behind this lock past tasks.promote-after-ms, and well within migrate's lock timeout
    try (java.sql.Connection holder = dev.tidemark.testsupport.TestDatabases.jdbc(infra, DB)) {
      holder.setAutoCommit(false);
      holder.createStatement().execute("LOCK TABLE public.tk_lock IN ACCESS EXCLUSIVE MODE");
      created = TaskCalls.created(agent, "migrate", args);
      holder.commit();
    }
    JsonObject done = TaskCalls.awaitStatus(agent, created.getString("taskId"), "completed", Duration.ofSeconds(30));
    JsonObject result = done.getJsonObject("result");
    assertNull(result.getValue("isError"), result::encode);
    OutputSchemas.assertFits("migrate", result.getJsonObject("structuredContent"));
    assertEquals("plan", result.getJsonObject("structuredContent").getString("mode"), result::encode);
  }

  @Test
  void aTaskIdThatIsUnknownExpiredOrAnotherCallersIsRefusedAlikeAndChangesNothing() {
    String marker = "tasks_it_ttl_" + UUID.randomUUID().toString().substring(0, 8);
    JsonObject created = TaskCalls.created(agent, "query", new JsonObject().put("sql", "SELECT pg_sleep(20) AS " + marker));
    String mine = created.getString("taskId");
    try (McpHttpClient other = TaskCalls.connect(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
      JsonObject unknown = TaskCalls.refusal(agent, "tasks/get", "task_" + "A".repeat(22));
      assertEquals(-32602, unknown.getInteger("code"));
      for (String method : List.of("tasks/get", "tasks/update", "tasks/cancel")) {
        assertEquals(unknown, TaskCalls.refusal(other, method, mine), "another caller's task is as unknown as none: " + method);
        assertEquals(unknown, TaskCalls.refusal(agent, method, "not-a-task-id"), "a malformed id too: " + method);
      }
      assertEquals("working", TaskCalls.get(agent, mine).getString("status"), "another caller's cancel changed nothing");
      assertTrue(TaskCalls.running(infra, DB, marker) || Await.until(() -> TaskCalls.running(infra, DB, marker), Duration.ofSeconds(10)));

      try (McpHttpClient plain = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN)) {
        JsonObject undeclared = plain.rpc("tasks/get", new JsonObject().put("taskId", mine)).getJsonObject("error");
        assertEquals(-32021, undeclared.getInteger("code"), "the owner's session without the extension: " + undeclared.encode());
        assertTrue(undeclared.getJsonObject("data").getJsonObject("requiredCapabilities").getJsonObject("extensions")
            .containsKey("io.modelcontextprotocol/tasks"), undeclared::encode);
        JsonObject sync = plain.callTool("query", new JsonObject().put("sql", "SELECT 1 AS one"));
        assertNull(sync.getValue("resultType"), "a client without the extension never gets a task: " + sync.encode());
      }

      // a task whose call asked to be kept 2 s is gone after that, for its own caller too, and so is its statement
      JsonObject brief = agent.rpc("tools/call", new JsonObject().put("name", "query")
          .put("arguments", new JsonObject().put("sql", "SELECT pg_sleep(20) AS " + marker + "_brief"))
          .put("task", new JsonObject().put("ttl", 2000))).getJsonObject("result");
      assertEquals(2000L, brief.getLong("ttlMs"), brief::encode);
      Await.that("the task to expire", Duration.ofSeconds(15),
          () -> agent.rpc("tasks/get", new JsonObject().put("taskId", brief.getString("taskId"))).containsKey("error"));
      assertEquals(unknown, TaskCalls.refusal(agent, "tasks/get", brief.getString("taskId")), "an expired task is as unknown as none");
      Await.that("the expired task's statement to stop", Duration.ofSeconds(10), () -> !TaskCalls.running(infra, DB, marker + "_brief"));
      agent.rpc("tasks/cancel", new JsonObject().put("taskId", mine));
    }
  }

  @Test
  void aTaskOutlivesTheNodeThatStartedItAndACallThatNodeRanEndsAsLost() throws Exception {
    JsonObject proposed = proposeRaise(2, 250);
    String proposal = TaskCalls.proposalOf(proposed);
    String marker = "tasks_it_lost_" + UUID.randomUUID().toString().substring(0, 8);
    JsonObject running = TaskCalls.created(agent, "query", new JsonObject().put("sql", "SELECT pg_sleep(10) AS " + marker));

    // the node that started both goes, and a node of another cluster, which shares nothing with it but PostgreSQL, takes its place
    agent.close();
    TestNodes.stop(node);
    settings.put(ConfigKey.CLUSTER_NAME, TestNodes.clusterName());
    node = TestNodes.startCaughtUp(settings);
    agent = TaskCalls.connect(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);

    JsonObject waiting = TaskCalls.get(agent, proposed.getString("taskId"));
    assertEquals("working", waiting.getString("status"), waiting::encode);
    TaskCalls.decide(settings, p -> p.approve(proposal, "ada"));
    JsonObject done = TaskCalls.get(agent, proposed.getString("taskId"));
    assertEquals("completed", done.getString("status"), done::encode);
    assertEquals("commit", done.getJsonObject("result").getJsonObject("structuredContent").getString("mode"), done::encode);
    assertEquals(List.of("1:100", "2:250"), amounts());

    JsonObject lost = TaskCalls.get(agent, running.getString("taskId"));
    assertEquals("failed", lost.getString("status"), "its outcome went with the node that ran it: " + lost.encode());
    JsonObject error = lost.getJsonObject("error");
    assertEquals("UNAVAILABLE", error.getJsonObject("data").getString("code"), error::encode);
    assertEquals(true, error.getJsonObject("data").getBoolean("retriable"), error::encode);
  }
}
