package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The console on one node, through its HTTP as a browser speaks it, with administrator tokens (no
 * OAuth issuer): sign-in and its cookie, approvals, and every refusal of the bad input but
 * the decision on two nodes ({@code ConsoleClusterIT}); the browser itself is {@code ConsoleBrowserIT}.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleIT {

  static final String DB = "console_it";
  static final String ADMIN = "tmk_consoleItAdministrator000000000000000";
  static final String ONLOOKER = "tmk_consoleItOnlookerReader00000000000000";
  /** An administrator whose token expires a few seconds after the test that signs in with it makes it. */
  static final String BRIEF = "tmk_consoleItBriefAdministrator0000000000";
  static final String FIRST = "tmk_consoleItFirstOfTwoSameName0000000000";
  static final String AGAIN = "tmk_consoleItSecondOfTwoSameName000000000";
  /** An agent whose calls and streams the agents page counts; no other test calls as it. */
  static final String COUNTED = "tmk_consoleItCountedAgent000000000000000";

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient agent;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    Map<ConfigKey, String> settings = TestNodes.servingDatabase(infra, DB,
        "DROP TABLE IF EXISTS public.ct_salary, public.ct_note CASCADE",
        "CREATE TABLE public.ct_salary (id int PRIMARY KEY, amount int NOT NULL, note text)",
        "CREATE TABLE public.ct_note (id int PRIMARY KEY, body text)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.ct_salary, public.ct_note TO tidemark_writer",
        "REVOKE ALL ON public.ct_note FROM tidemark_reader, PUBLIC",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    ConsoleClient.tokens(infra, DB, Map.of("console-admin", ADMIN));
    ConsoleClient.tokens(infra, DB, Map.of("console-onlooker", ONLOOKER), "tidemark_reader");
    settings.put(ConfigKey.DATABASE_APPROVAL_TABLES, "ct_salary");
    settings.put(ConfigKey.CONSOLE_ENABLED, "true");
    settings.put(ConfigKey.CONSOLE_ADMINISTRATORS, "console-admin,console-onlooker,console-brief,console-again");
    settings.put(ConfigKey.DATABASE_APPROVERS, "console-admin");
    // three instances of the endpoint, whatever the cores: what the console counts and serves is the node's, not an instance's
    settings.put(ConfigKey.NODE_GATEWAY_INSTANCES, "3");
    // a tool the team defined, whose calls the agents page counts under its own name
    settings.put(ConfigKey.DATABASE_TOOLS, "[{\"name\": \"note_count\", \"description\": \"How many notes there are.\", \"kind\": \"read\","
        + " \"statement\": \"SELECT count(*) AS n FROM public.ct_note\", \"roles\": [\"tidemark_writer\"]}]");
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", settings);
    agent = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
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
    sql(infra, DB, "TRUNCATE public.ct_salary, public.ct_note", "INSERT INTO public.ct_salary VALUES (1, 100, 'plain'), (2, 200, 'plain')");
  }

  private ConsoleClient signedIn(String token) {
    ConsoleClient c = new ConsoleClient(ConsoleClient.base(node));
    assertEquals(303, c.signIn(token).status());
    return c;
  }

  /** The agent proposes to set row {@code id}'s amount and note; the proposal's id. */
  private String propose(int id, int amount, String note) {
    JsonObject args = new JsonObject().put("table", "ct_salary").put("key", id)
        .put("set", new JsonObject().put("amount", amount).put("note", note));
    JsonObject plan = ToolResults.ok(agent, "update_rows", args);
    JsonObject proposed = ToolResults.ok(agent, "update_rows", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()));
    assertEquals("proposed", proposed.getString("mode"), proposed::encode);
    return proposed.getString("proposal_id");
  }

  private String row(int id) {
    return ChangelogFixtures.strings(infra, DB, "SELECT amount || ':' || coalesce(note, '') FROM public.ct_salary WHERE id = " + id).get(0);
  }

  private List<String> audit(String proposal) {
    return ChangelogFixtures.strings(infra, DB, "SELECT action || ' by ' || actor FROM tidemark.proposal_audit WHERE proposal_id = '"
        + proposal + "' ORDER BY id");
  }

  private static Map<String, String> form(String token) {
    return token == null ? Map.of() : Map.of("form_token", token);
  }

  @Test
  void aSignInIsAStrictHttpOnlyCookieAndEveryPageForbidsScriptsAndFraming() {
    ConsoleClient c = new ConsoleClient(ConsoleClient.base(node));
    assertEquals(303, c.get("/console/approvals").status(), "a page without a sign-in sends the person to sign in");
    ConsoleClient.Page signedIn = c.signIn(ADMIN);
    assertEquals(303, signedIn.status());
    String cookie = signedIn.header("Set-Cookie").lines().filter(l -> l.startsWith("tidemark_console=")).findFirst().orElseThrow();
    String flags = cookie.toLowerCase(java.util.Locale.ROOT);
    assertTrue(flags.contains("; httponly") && flags.contains("; samesite=strict") && flags.contains("; path=/console"), cookie);
    assertFalse(flags.contains("; secure"), "plain HTTP on loopback, with no https public URL: " + cookie);
    assertFalse(flags.contains("max-age") || flags.contains("expires="), "a cookie of the browser session: its sign-in says when it"
        + " expires, so that an expired one is told, not forgotten: " + cookie);
    assertFalse(cookie.contains(ADMIN), "the token is never in the cookie");
    ConsoleClient.Page page = c.get("/console/approvals");
    assertEquals(200, page.status());
    String csp = page.header("Content-Security-Policy");
    assertTrue(csp.contains("default-src 'none'") && !csp.contains("script-src") && csp.contains("frame-ancestors 'none'")
        && csp.contains("form-action 'self'"), csp);
    assertEquals("no-store", page.header("Cache-Control"));
    assertTrue(page.doc().select("script").isEmpty(), "no script at all");
    assertEquals("console-admin", page.doc().selectFirst(".person").text());
  }

  @Test
  void onlyAnAdministratorsTokenSignsIn() {
    ConsoleClient c = new ConsoleClient(ConsoleClient.base(node));
    ConsoleClient.Page agentToken = c.signIn(TestNodes.READ_WRITE_TOKEN);
    assertEquals(403, agentToken.status());
    assertEquals("PERMISSION_DENIED", agentToken.refusalCode());
    ConsoleClient.Page unknown = c.signIn("tmk_thisTokenWasNeverMade00000000000000000");
    assertEquals(401, unknown.status());
    assertEquals("SIGN_IN_REQUIRED", unknown.refusalCode());
    assertEquals(303, c.get("/console/approvals").status(), "neither signed in");
  }

  @Test
  void anApprovalShowsEveryRowBeforeAndAfterAsTextAndWritesExactlyThoseRecordingWhoDecided() {
    String markup = "<img src=x onerror=alert(1)><script>alert(2)</script>";
    String id = propose(1, 150, markup);
    ConsoleClient c = signedIn(ADMIN);
    Document page = c.get("/console/approvals").doc();
    Element proposal = page.selectFirst("section.proposal[data-proposal=" + id + "]");
    assertNotNull(proposal, page::html);
    assertEquals("update_rows", proposal.selectFirst("dd[data-fact=tool]").text());
    assertTrue(proposal.selectFirst("dd[data-fact=caller]").text().startsWith("dev-read-write"));
    Element rows = proposal.selectFirst("table.row[data-table=public.ct_salary]");
    assertEquals("UPDATE", rows.attr("data-op"));
    assertEquals(List.of("amount", "note"), rows.select("tr.changed").eachAttr("data-column"), "the changed columns are marked");
    Element note = rows.selectFirst("tr[data-column=note]");
    assertEquals(List.of("plain", markup), note.select("td").eachText(), "before and after, the text as text");
    assertTrue(proposal.select("img, script").isEmpty(), "nothing an agent wrote becomes markup");
    assertEquals("100:plain", row(1), "nothing written before the decision");

    ConsoleClient.Page decided = c.post("/console/approvals/" + id + "/approve?database=main", form(proposal.selectFirst("form.approve")
        .selectFirst("input[name=form_token]").val()));
    assertEquals(200, decided.status(), decided.body());
    assertEquals("applied", decided.doc().selectFirst("section.decision").attr("data-status"));
    assertEquals("150:" + markup, row(1), "exactly the row shown");
    assertEquals(List.of("proposed by dev-read-write", "approved by console-admin", "applied by console-admin"), audit(id));
    assertEquals("console-admin", ToolResults.ok(agent, "status", new JsonObject().put("proposal", id)).getJsonObject("proposal")
        .getString("decided_by"), "the proposer's agent reads who decided");
  }

  @Test
  void aRejectionsReasonIsReadBackByTheProposersAgent() {
    String id = propose(2, 900, "raise");
    ConsoleClient c = signedIn(ADMIN);
    String token = c.get("/console/approvals").formToken("section[data-proposal=" + id + "] form.reject");
    ConsoleClient.Page noReason = c.post("/console/approvals/" + id + "/reject", form(token));
    assertEquals(400, noReason.status(), "a rejection needs a reason");
    token = c.get("/console/approvals").formToken("section[data-proposal=" + id + "] form.reject");
    ConsoleClient.Page rejected = c.post("/console/approvals/" + id + "/reject", Map.of("form_token", token,
        "reason", "Budget is frozen until March; ask again then."));
    assertEquals("rejected", rejected.doc().selectFirst("section.decision").attr("data-status"), rejected.body());
    JsonObject seen = ToolResults.ok(agent, "status", new JsonObject().put("proposal", id)).getJsonObject("proposal");
    assertEquals("rejected", seen.getString("status"));
    assertEquals("Budget is frozen until March; ask again then.", seen.getString("reason"));
    assertEquals("200:plain", row(2));
  }

  @Test
  void aFormWithoutItsTokenWithAnotherActionsAnotherSignInsOrFromAnotherSiteIsRefusedAndNothingIsDecided() {
    String id = propose(1, 111, "x");
    String other = propose(2, 222, "y");
    ConsoleClient c = signedIn(ADMIN);
    ConsoleClient.Page page = c.get("/console/approvals");
    String approveOther = page.formToken("section[data-proposal=" + other + "] form.approve");
    String rejectThis = page.formToken("section[data-proposal=" + id + "] form.reject");
    String approveThis = page.formToken("section[data-proposal=" + id + "] form.approve");

    ConsoleClient.Page missing = c.post("/console/approvals/" + id + "/approve", Map.of());
    assertEquals(403, missing.status());
    assertEquals("FORM_REFUSED", missing.refusalCode());
    ConsoleClient.Page anotherProposal = c.post("/console/approvals/" + id + "/approve", form(approveOther));
    assertEquals("FORM_REFUSED", anotherProposal.refusalCode(), "a token for another proposal");
    ConsoleClient.Page anotherAction = c.post("/console/approvals/" + id + "/approve", form(rejectThis));
    assertEquals("FORM_REFUSED", anotherAction.refusalCode(), "a rejection's token does not approve");
    ConsoleClient.Page forged = c.post("/console/approvals/" + id + "/approve", form(approveThis.substring(0, approveThis.length() - 4) + "AAAA"));
    assertEquals("FORM_REFUSED", forged.refusalCode(), "an altered token");
    ConsoleClient.Page crossSite = c.post("/console/approvals/" + id + "/approve", form(approveThis), "https://evil.example");
    assertEquals(403, crossSite.status());
    assertEquals("FORM_REFUSED", crossSite.refusalCode(), "a form sent from another site");

    ConsoleClient second = signedIn(ADMIN);
    ConsoleClient.Page otherSignIn = second.post("/console/approvals/" + id + "/approve", form(approveThis));
    assertEquals("FORM_REFUSED", otherSignIn.refusalCode(), "a form of another sign-in, even the same person's");

    assertEquals("100:plain", row(1));
    assertEquals(List.of("proposed by dev-read-write"), audit(id), "nothing decided");
    ConsoleClient.Page real = c.post("/console/approvals/" + id + "/approve", form(approveThis));
    assertEquals("applied", real.doc().selectFirst("section.decision").attr("data-status"), "the untouched form still works");
  }

  @Test
  void aFormSentTwiceIsTakenOnce() {
    ConsoleClient c = signedIn(ADMIN);
    String token = c.get("/console/tokens").formToken("form.create-token");
    Map<String, String> fields = Map.of("form_token", token, "name", "twice-made", "role", "tidemark_reader", "databases", "*");
    ConsoleClient.Page first = c.post("/console/tokens", fields);
    assertEquals(200, first.status(), first.body());
    assertTrue(first.doc().selectFirst("code.secret").text().startsWith("tmk_"), "the token, shown once");
    ConsoleClient.Page replay = c.post("/console/tokens", fields);
    assertEquals(409, replay.status());
    assertEquals("FORM_REFUSED", replay.refusalCode());
    assertEquals(List.of("1"), ChangelogFixtures.strings(infra, DB, "SELECT count(*)::text FROM tidemark.api_token WHERE name = 'twice-made'"));
    assertNull(c.get("/console/tokens").doc().selectFirst("code.secret"), "the list never shows a token again");
  }

  @Test
  void aPersonWhoIsNotAnApproverSeesNoRowsAndIsRefusedADecision() {
    String id = propose(1, 5000, "sneaky");
    ConsoleClient onlooker = signedIn(ONLOOKER);
    Element proposal = onlooker.get("/console/approvals").doc().selectFirst("section[data-proposal=" + id + "]");
    assertNotNull(proposal.selectFirst(".note"));
    assertTrue(proposal.select("table.row, form").isEmpty(), "no rows and no forms: " + proposal);
    // a form made for an approver, taken by the onlooker, still decides nothing
    String approverForm = signedIn(ADMIN).get("/console/approvals").formToken("section[data-proposal=" + id + "] form.approve");
    ConsoleClient.Page refused = onlooker.post("/console/approvals/" + id + "/approve", form(approverForm));
    assertEquals(403, refused.status());
    assertEquals("PERMISSION_DENIED", refused.refusalCode());
    assertTrue(refused.doc().selectFirst(".message").text().contains("not an approver"), refused.body());
    assertEquals("100:plain", row(1));
    assertEquals(List.of("proposed by dev-read-write"), audit(id));
  }

  @Test
  void theAuditTrailShowsEachChangeAsTheViewersOwnRoleMayReadItWithItsKeyAndPlan() {
    JsonObject args = new JsonObject().put("table", "ct_note").put("rows", new io.vertx.core.json.JsonArray()
        .add(new JsonObject().put("id", 7).put("body", "hello")));
    JsonObject plan = ToolResults.ok(agent, "insert_rows", args);
    String key = "audit-" + UUID.randomUUID();
    ToolResults.ok(agent, "insert_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key));
    ConsoleClient admin = signedIn(ADMIN);
    Await.that("the audit trail shows the insert", Duration.ofSeconds(30), () ->
        admin.get("/console/audit?table=ct_note&tool=insert_rows&caller=dev-read-write").doc().selectFirst("section.transaction") != null);
    Element tx = admin.get("/console/audit?table=ct_note&tool=insert_rows&caller=dev-read-write").doc().selectFirst("section.transaction");
    assertEquals(key, tx.selectFirst("dd[data-fact=idempotency key]").text());
    assertEquals(plan.getString("plan_id"), tx.selectFirst("dd[data-fact=plan id]").text());
    assertEquals("hello", tx.selectFirst("table.row[data-table=public.ct_note] tr[data-column=body]").select("td").get(1).text());
    String xid = tx.attr("data-transaction");
    assertNotNull(admin.get("/console/audit?transaction=" + xid).doc().selectFirst("section.transaction[data-transaction=" + xid + "]"));
    assertNull(admin.get("/console/audit?table=ct_note&tool=update_rows").doc().selectFirst("section.transaction[data-transaction=" + xid + "]"),
        "another tool's filter leaves it out");
    assertEquals(400, admin.get("/console/audit?transaction=1%20OR%201").status(), "a transaction is a number");

    // the onlooker's role (tidemark_reader) may not read ct_note: the same transaction is not there for them
    ConsoleClient onlooker = signedIn(ONLOOKER);
    assertNull(onlooker.get("/console/audit?transaction=" + xid).doc().selectFirst("section.transaction"));
  }

  @Test
  void anExpiredSignInIsRefusedWithAClearPage() {
    // a sign-in lasts no longer than its token: made with a token that expires in 3 s, it expires with it, as one of
    // console.session-seconds does (the sealed expiry is the sooner of the two), without the test waiting for a session
    ConsoleClient.tokens(infra, DB, Map.of("console-brief", BRIEF));
    sql(infra, DB, "UPDATE tidemark.api_token SET expires_at = now() + interval '3 seconds' WHERE name = 'console-brief'");
    ConsoleClient c = signedIn(BRIEF);
    String token = c.get("/console/tokens").formToken("form.revoke");
    Await.that("the sign-in expires with its token", Duration.ofSeconds(30), () -> c.get("/console/approvals").status() == 401);
    ConsoleClient.Page page = c.get("/console/approvals");
    assertEquals("SIGN_IN_REQUIRED", page.refusalCode());
    assertTrue(page.doc().selectFirst(".message").text().contains("Your sign-in expired at"), page.body());
    assertNotNull(page.doc().selectFirst("a[href=/console/sign-in]"));
    ConsoleClient.Page late = c.post("/console/tokens/console-onlooker/revoke", form(token));
    assertEquals(401, late.status(), "a form of an expired sign-in does nothing");
    assertEquals(List.of("true"), ChangelogFixtures.strings(infra, DB,
        "SELECT (revoked_at IS NULL)::text FROM tidemark.api_token WHERE name = 'console-onlooker'"));
  }

  @Test
  void aTokenMadeAgainUnderItsNameEndsTheSignInsOfTheTokenItReplaced() {
    ConsoleClient.tokens(infra, DB, Map.of("console-again", FIRST));
    ConsoleClient before = signedIn(FIRST);
    assertEquals(200, before.get("/console/approvals").status());
    // as `tidemark token create` with a name in use does: the same row, a new token
    ConsoleClient.tokens(infra, DB, Map.of("console-again", AGAIN));
    ConsoleClient.Page ended = before.get("/console/approvals");
    assertEquals(401, ended.status(), "the replaced token's sign-in ends with it");
    assertEquals("SIGN_IN_REQUIRED", ended.refusalCode());
    assertTrue(ended.doc().selectFirst(".message").text().contains("was revoked, has expired or was replaced"), ended.body());
    ConsoleClient after = signedIn(AGAIN);
    assertEquals(200, after.get("/console/approvals").status(), "the new token signs in and stays signed in");
    assertEquals(200, after.get("/console/tokens").status());
  }

  @Test
  void theAgentsAtWorkCountEachCallAndStreamOnceWhicheverGatewayInstanceServedIt() throws Exception {
    ConsoleClient.tokens(infra, DB, Map.of("counted-agent", COUNTED));
    // each client its own connection, which the node hands to its next instance: the four calls land on all three
    for (int i = 0; i < 4; i++) {
      try (McpHttpClient each = TestNodes.connect(node, COUNTED)) {
        ToolResults.ok(each, "status", new JsonObject());
      }
    }
    try (McpHttpClient named = TestNodes.connect(node, COUNTED)) {
      Await.that("the named tool is served", Duration.ofSeconds(30), () -> named.rpc("tools/list", new JsonObject())
          .getJsonObject("result").getJsonArray("tools").stream().anyMatch(t -> "note_count".equals(((JsonObject) t).getString("name"))));
      JsonObject counted = named.callTool("note_count", new JsonObject());
      assertFalse(counted.getBoolean("isError", false), counted::encode);
    }
    try (McpHttpClient listener = TestNodes.connect(node, COUNTED);
        SseStream stream = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(node), MultiMap.caseInsensitiveMultiMap()
            .add("Authorization", "Bearer " + COUNTED).add("Accept", "text/event-stream")
            .add("Mcp-Session-Id", listener.sessionId()).add("MCP-Protocol-Version", "2025-11-25"), null)) {
      assertEquals(200, stream.status());
      ConsoleClient c = signedIn(ADMIN);
      Await.that("the agents page shows the open stream", Duration.ofSeconds(10), () -> {
        Element row = c.get("/console/agents").doc().selectFirst("table.callers tr[data-caller=counted-agent]");
        return row != null && row.select("td").get(2).text().equals("1");
      });
      Element row = c.get("/console/agents").doc().selectFirst("table.callers tr[data-caller=counted-agent]");
      assertEquals("note_count 1, status 4", row.select("td").get(3).text(), row::outerHtml);
      assertEquals("1", row.select("td").get(2).text(), "one stream, counted once for the node: " + row.outerHtml());
    }
  }
}
