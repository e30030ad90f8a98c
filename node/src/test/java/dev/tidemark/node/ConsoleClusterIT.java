package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The console on two nodes of one cluster: one sign-in works on both (it is a sealed cookie, not a
 * node's session), signing out on one ends it on the other, and one proposal approved on both at
 * once is decided once.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleClusterIT {

  static final String DB = "console_cluster_it";
  static final String ADMIN = "tmk_consoleClusterItAdministrator00000000";

  private SharedInfra infra;
  private TidemarkNode a;
  private TidemarkNode b;
  private McpHttpClient agent;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.cc_salary CASCADE",
        "CREATE TABLE public.cc_salary (id int PRIMARY KEY, amount int NOT NULL)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.cc_salary TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])",
        "INSERT INTO public.cc_salary VALUES (1, 100)");
    ConsoleClient.tokens(infra, DB, Map.of("cluster-admin", ADMIN));
    Map<ConfigKey, String> settings = new EnumMap<>(ConfigKey.class);
    settings.put(ConfigKey.DATABASE_APPROVAL_TABLES, "cc_salary");
    settings.put(ConfigKey.CONSOLE_ENABLED, "true");
    settings.put(ConfigKey.CONSOLE_ADMINISTRATORS, "cluster-admin");
    settings.put(ConfigKey.DATABASE_APPROVERS, "cluster-admin");
    TidemarkNode[] pair = ChangelogFixtures.startQueryPair(infra, DB, "main", "console", settings);
    a = pair[0];
    b = pair[1];
    agent = TestNodes.connect(b, TestNodes.READ_WRITE_TOKEN);
  }

  @AfterAll
  void stop() {
    if (agent != null) {
      agent.close();
    }
    TestNodes.stop(a);
    TestNodes.stop(b);
  }

  @Test
  void oneProposalApprovedOnTwoNodesAtOnceIsDecidedOnceAndWrittenOnce() {
    JsonObject args = new JsonObject().put("table", "cc_salary").put("key", 1).put("set", new JsonObject().put("amount", 175));
    JsonObject plan = ToolResults.ok(agent, "update_rows", args);
    String id = ToolResults.ok(agent, "update_rows", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString())).getString("proposal_id");

    ConsoleClient onA = new ConsoleClient(ConsoleClient.base(a));
    assertEquals(303, onA.signIn(ADMIN).status());
    ConsoleClient onB = onA.at(ConsoleClient.base(b));
    // each node's page gives its own form: the forms differ, so only the proposal's lock can keep the second out
    String formA = onA.get("/console/approvals").formToken("section[data-proposal=" + id + "] form.approve");
    String formB = onB.get("/console/approvals").formToken("section[data-proposal=" + id + "] form.approve");
    String path = "/console/approvals/" + id + "/approve";
    CompletableFuture<ConsoleClient.Page> sentA = onA.postAsync(path, Map.of("form_token", formA), ConsoleClient.base(a));
    CompletableFuture<ConsoleClient.Page> sentB = onB.postAsync(path, Map.of("form_token", formB), ConsoleClient.base(b));
    List<ConsoleClient.Page> answers = new ArrayList<>(List.of(ConsoleClient.join(sentA), ConsoleClient.join(sentB)));
    answers.sort((x, y) -> Integer.compare(x.status(), y.status()));
    assertEquals(200, answers.get(0).status(), answers.get(0).body());
    assertEquals("applied", answers.get(0).doc().selectFirst("section.decision").attr("data-status"));
    assertEquals(409, answers.get(1).status(), answers.get(1).body());
    assertTrue(answers.get(1).doc().selectFirst(".message").text().contains("applied already"), answers.get(1).body());

    assertEquals(List.of("175"), ChangelogFixtures.strings(infra, DB, "SELECT amount::text FROM public.cc_salary WHERE id = 1"));
    assertEquals(List.of("proposed", "approved", "applied"), ChangelogFixtures.strings(infra, DB,
        "SELECT action FROM tidemark.proposal_audit WHERE proposal_id = '" + id + "' ORDER BY id"), "exactly one decision recorded");
    assertEquals(List.of("1"), ChangelogFixtures.strings(infra, DB,
        "SELECT count(*)::text FROM tidemark.changelog c JOIN tidemark.change_attribution at ON at.xid = c.xid"
            + " WHERE at.plan_id = 'proposal:" + id + "'"), "one change written");
  }

  @Test
  void aSignInMadeOnOneNodeServesOnTheOtherUntilItIsSignedOutOnEither() {
    ConsoleClient onA = new ConsoleClient(ConsoleClient.base(a));
    assertEquals(303, onA.signIn(ADMIN).status());
    ConsoleClient onB = onA.at(ConsoleClient.base(b));
    assertEquals(200, onB.get("/console/agents").status(), "node B serves A's sign-in");
    String kept = onA.cookie("tidemark_console");
    String signOut = onB.get("/console/tokens").formToken("form.inline");
    assertEquals(200, onB.post("/console/sign-out", Map.of("form_token", signOut), ConsoleClient.base(b)).status());
    // a browser that kept the cookie (or someone who copied it) finds the sign-in ended on the other node too
    ConsoleClient copy = new ConsoleClient(ConsoleClient.base(a));
    copy.keep("tidemark_console", kept);
    ConsoleClient.Page refused = copy.get("/console/approvals");
    assertEquals(401, refused.status(), refused.body());
    assertEquals("SIGN_IN_REQUIRED", refused.refusalCode());
    assertTrue(refused.doc().selectFirst(".message").text().contains("signed out"), refused.body());
  }
}
