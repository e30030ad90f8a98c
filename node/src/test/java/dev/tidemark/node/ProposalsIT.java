package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Approvals for protected tables: a committed plan that touches a table of
 * database.approval-tables becomes a proposal, which a person lists, shows, approves or rejects
 * with {@code tidemark proposals}; an approved proposal is applied as its proposer, by the command
 * line itself, so it needs no running node.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProposalsIT {

  static final String DB = "proposals_it";

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient client;
  private Map<ConfigKey, String> settings;
  @TempDir
  Path dir;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    settings = TestNodes.servingDatabase(infra, DB,
        "DROP TABLE IF EXISTS public.pr_salary, public.pr_note CASCADE",
        "CREATE TABLE public.pr_salary (id int PRIMARY KEY, amount int NOT NULL)",
        "CREATE TABLE public.pr_note (id int PRIMARY KEY, body text)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.pr_salary, public.pr_note TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    settings.put(ConfigKey.DATABASE_APPROVAL_TABLES, "pr_salary");
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", settings);
    client = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
  }

  @AfterAll
  void stop() {
    if (client != null) {
      client.close();
    }
    TestNodes.stop(node);
  }

  @BeforeEach
  void seed() {
    sql(infra, DB, "TRUNCATE public.pr_salary, public.pr_note", "INSERT INTO public.pr_salary VALUES (1, 100), (2, 200)");
  }

  private Cli.Run proposals(String... args) throws Exception {
    int port = dev.tidemark.devstack.FreePorts.allocate();
    Map<ConfigKey, String> values = TestNodes.config(infra, TestNodes.clusterName(), port, "127.0.0.1:" + port, "command");
    values.putAll(settings);
    return Cli.withConfig(dir, values, "proposals", args);
  }

  private List<String> amounts() {
    return ChangelogFixtures.strings(infra, DB, "SELECT id || ':' || amount FROM public.pr_salary ORDER BY id");
  }

  /** Plans and commits {@code args} with update_rows; returns the commit's result. */
  private JsonObject commit(McpHttpClient c, JsonObject args, String key) {
    JsonObject plan = ToolResults.ok(c, "update_rows", args);
    assertEquals("plan", plan.getString("mode"));
    return ToolResults.ok(c, "update_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key));
  }

  private static JsonObject raise(int id, int amount) {
    return new JsonObject().put("table", "pr_salary").put("key", id).put("set", new JsonObject().put("amount", amount));
  }

  private JsonObject proposalOf(McpHttpClient c, String id) {
    return ToolResults.ok(c, "status", new JsonObject().put("proposal", id)).getJsonObject("proposal");
  }

  @Test
  void aChangeToAProtectedTableWaitsForAPersonAndIsAppliedAsItsProposer() throws Exception {
    JsonObject plan = ToolResults.ok(client, "update_rows", raise(1, 150));
    assertTrue(ToolResults.ok(client, "update_rows", raise(1, 150)).getString("plan_id") != null);
    String key = UUID.randomUUID().toString();
    JsonObject proposed = ToolResults.ok(client, "update_rows", raise(1, 150).put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", key));
    assertEquals("proposed", proposed.getString("mode"), proposed::encode);
    JsonObject documented = DocsTest.jsonExample("change-tools.md", "## Approvals for protected tables");
    assertEquals(documented.fieldNames(), proposed.fieldNames(), "docs/change-tools.md shows this answer");
    assertEquals(documented.getString("mode"), proposed.getString("mode"));
    assertEquals(documented.getJsonArray("changes").getJsonObject(0).fieldNames(), proposed.getJsonArray("changes").getJsonObject(0).fieldNames());
    String id = proposed.getString("proposal_id");
    assertEquals(List.of("1:100", "2:200"), amounts(), "nothing is written before a person approves");
    assertEquals("pending", proposalOf(client, id).getString("status"));
    JsonObject again = ToolResults.ok(client, "update_rows", raise(1, 150).put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", key));
    assertEquals(id, again.getString("proposal_id"), "a retry finds the same proposal");

    Cli.Run listed = proposals("list", "--status", "pending");
    assertEquals(0, listed.code(), listed.err());
    assertTrue(listed.out().contains(id) && listed.out().contains("public.pr_salary"), listed.out());
    Cli.Run shown = proposals("show", id);
    JsonObject detail = new JsonObject(shown.out());
    assertEquals("update_rows", detail.getString("tool"));
    assertEquals(1, detail.getJsonObject("plan").getJsonObject("totals").getInteger("updated"));
    JsonObject row = detail.getJsonArray("rows").getJsonObject(0);
    assertEquals(new JsonObject().put("id", 1).put("amount", 150), row.getJsonObject("after"), "every row it writes, whole");

    Cli.Run approved = proposals("approve", id, "--by", "ada");
    assertEquals(0, approved.code(), approved.out() + approved.err());
    assertTrue(approved.out().contains("applied"), approved.out());
    assertEquals(List.of("1:150", "2:200"), amounts());
    JsonObject followed = proposalOf(client, id);
    assertEquals("applied", followed.getString("status"));
    assertEquals("ada", followed.getString("decided_by"));

    JsonObject replay = ToolResults.ok(client, "update_rows", raise(1, 150).put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", key));
    assertEquals(true, replay.getBoolean("replayed"), replay::encode);
    assertEquals("commit", replay.getString("mode"), "the proposer's retry replays the applied change");

    ChangelogFixtures.awaitDecoded(infra, DB);
    JsonArray changes = ToolResults.ok(client, "changes_since", new JsonObject().put("tables", new JsonArray().add("pr_salary"))
        .put("limit", 1000)).getJsonArray("changes");
    assertTrue(changes.stream().map(JsonObject.class::cast).anyMatch(c -> id.equals(c.getString("proposal"))
        && "update_rows".equals(c.getString("tool"))), changes::encode);

    JsonArray audit = new JsonObject(proposals("show", id).out()).getJsonArray("audit");
    assertEquals(List.of("proposed", "approved", "applied"), audit.stream().map(a -> ((JsonObject) a).getString("action")).toList());
    Cli.Run twice = proposals("approve", id);
    assertEquals(1, twice.code(), "a decided proposal is not approved again");
  }

  @Test
  void aChangeElsewhereCommitsAtOnceAndARejectedProposalIsNeverApplied() throws Exception {
    JsonObject note = new JsonObject().put("table", "pr_note").put("rows", new JsonArray().add(new JsonObject().put("id", 1).put("body", "x")));
    JsonObject plan = ToolResults.ok(client, "insert_rows", note);
    assertEquals("commit", ToolResults.ok(client, "insert_rows", note.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString())).getString("mode"), "an unprotected table commits as always");

    String id = commit(client, raise(2, 1), UUID.randomUUID().toString()).getString("proposal_id");
    Cli.Run rejected = proposals("reject", id, "--by", "bob", "--reason", "too low");
    assertEquals(0, rejected.code(), rejected.err());
    JsonObject followed = proposalOf(client, id);
    assertEquals("rejected", followed.getString("status"));
    assertEquals("too low", followed.getString("reason"));
    assertEquals(1, proposals("approve", id).code(), "a rejected proposal cannot be approved");
    assertEquals(List.of("1:100", "2:200"), amounts());
  }

  @Test
  void aProposalWhoseRowsMovedOnIsStaleAndTellsItsProposerWhy() throws Exception {
    String id = commit(client, raise(1, 300), UUID.randomUUID().toString()).getString("proposal_id");
    sql(infra, DB, "UPDATE public.pr_salary SET amount = 110 WHERE id = 1");
    Cli.Run approved = proposals("approve", id);
    assertEquals(1, approved.code(), approved.out());
    assertTrue(approved.out().startsWith("Proposal " + id + " stale: PROPOSAL_STALE: "), approved.out());
    JsonObject followed = proposalOf(client, id);
    assertEquals("stale", followed.getString("status"));
    assertTrue(followed.getString("reason").contains("public.pr_salary: 1 updated row changed since it was shown (amount)"),
        followed::encode);
    assertEquals(List.of("1:110", "2:200"), amounts(), "applied exactly as planned or not at all");
  }

  @Test
  void anApprovalWritesOnlyTheValuesItShowedAndTheProposerReadsWhyNot() throws Exception {
    // the case of issue 37: a value read from a table the agent may write, changed between the proposal and its approval
    sql(infra, DB, "INSERT INTO public.pr_note VALUES (5, 'abc')");
    JsonObject args = new JsonObject().put("sql", "UPDATE public.pr_salary SET amount = (SELECT length(body) FROM public.pr_note WHERE id = 5)"
        + " WHERE id = 2");
    JsonObject plan = ToolResults.ok(client, "execute", args);
    String key = UUID.randomUUID().toString();
    String id = ToolResults.ok(client, "execute", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key))
        .getString("proposal_id");
    JsonObject shown = new JsonObject(proposals("show", id).out());
    assertEquals(3, shown.getJsonArray("rows").getJsonObject(0).getJsonObject("after").getInteger("amount"), "the person is shown 3");

    JsonObject note = new JsonObject().put("table", "pr_note").put("key", 5).put("set", new JsonObject().put("body", "a longer note"));
    JsonObject notePlan = ToolResults.ok(client, "update_rows", note);
    ToolResults.ok(client, "update_rows", note.copy().put("plan_id", notePlan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()));
    Cli.Run approved = proposals("approve", id, "--by", "ada");
    assertEquals(1, approved.code(), approved.out() + approved.err());
    assertTrue(approved.out().contains("stale") && approved.out().contains("would be written with other values than shown (amount)"),
        approved.out());
    assertEquals(List.of("1:100", "2:200"), amounts(), "nothing was written");

    JsonObject followed = proposalOf(client, id);
    assertEquals("stale", followed.getString("status"), "the proposer reads the outcome where it reads every proposal's");
    assertEquals("ada", followed.getString("decided_by"));
    assertTrue(followed.getString("reason").startsWith("PROPOSAL_STALE: "), followed::encode);
    JsonObject retried = ToolResults.ok(client, "execute", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key));
    assertEquals(id, retried.getString("proposal_id"), "a retry under the same key is the stale proposal");
    assertEquals(1, proposals("approve", id).code(), "a stale proposal is not approved again");
  }

  @Test
  void aProposalApprovedWhileItsProposersNodeIsDownIsAppliedAndTheProposerFollowsItOnAnotherNode() throws Exception {
    TidemarkNode first = TestNodes.startAlone(infra, "gateway,query,command", settings);
    String id;
    try (McpHttpClient c = TestNodes.connect(first, TestNodes.READ_WRITE_TOKEN)) {
      id = commit(c, raise(2, 250), UUID.randomUUID().toString()).getString("proposal_id");
    }
    TestNodes.stop(first);
    Cli.Run approved = proposals("approve", id, "--by", "carol");
    assertEquals(0, approved.code(), approved.out() + approved.err());
    assertEquals(List.of("1:100", "2:250"), amounts());
    assertEquals("applied", proposalOf(client, id).getString("status"), "the proposer follows it through any node");
  }

  @Test
  void noToolApprovesAProposal() {
    JsonArray tools = client.rpc("tools/list", new JsonObject()).getJsonObject("result").getJsonArray("tools");
    assertTrue(tools.stream().map(t -> ((JsonObject) t).getString("name")).noneMatch(n -> n.contains("approve") || n.contains("proposal")),
        "only a person with the database's login decides, on the command line");
    JsonObject response = client.rpc("tools/call", new JsonObject().put("name", "approve_proposal").put("arguments", new JsonObject()));
    assertEquals(-32602, response.getJsonObject("error").getInteger("code"), response::encode);
  }

  @Test
  void badIdsAndForeignProposalsAreRefused() throws Exception {
    assertEquals(1, proposals("approve", "prop_nope").code());
    assertEquals(2, proposals("list", "--status", "maybe").code());
    ToolResults.error(client, "status", new JsonObject().put("proposal", "prop_nope"), "NOT_FOUND");
    String id = commit(client, raise(1, 1), UUID.randomUUID().toString()).getString("proposal_id");
    try (McpHttpClient reader = TestNodes.connect(node, TestNodes.READ_ONLY_TOKEN)) {
      ToolResults.error(reader, "status", new JsonObject().put("proposal", id), "NOT_FOUND");
    }
    assertEquals(List.of("1:100", "2:200"), amounts());
  }
}
