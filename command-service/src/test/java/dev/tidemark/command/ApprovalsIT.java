package dev.tidemark.command;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.Pools;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A person's approval writes exactly the rows a proposal showed, or nothing. Proposals are made
 * through the command role, as an agent makes them; each approval runs as {@code tidemark proposals}
 * runs it, in a Vert.x and a pool of its own (a process of its own). The protected table
 * {@code ap_salary} has a BEFORE trigger that takes its {@code bonus} from {@code ap_rate} row 1,
 * and an AFTER trigger that writes a row of {@code ap_ledger} with the rate of {@code ap_rate} row 2:
 * each route by which a value the change writes can differ between the proposal and its approval
 * has a test. The protected tables {@code ap_entry} (a serial key, a {@code now()} default, a
 * generated column) and {@code ap_badge} (an identity ALWAYS key, a BEFORE INSERT trigger that
 * reads {@code ap_rate} row 1) take values as their rows are written: a plain insert into them is
 * written as shown, any other insert runs again.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ApprovalsIT {

  static final String DB = "approvals_it";

  private SharedInfra infra;
  private ServiceHarness harness;
  private TidemarkConfig config;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    // the tables' trigger functions are the test's own, reviewed as an operator would review them
    Map<ConfigKey, String> overrides = Map.of(ConfigKey.DATABASE_APPROVAL_TABLES, "ap_salary,ap_entry,ap_badge",
        ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.ap_bonus,public.ap_book,public.ap_level");
    harness = CommandRole.start(infra, DB, overrides);
    Map<ConfigKey, String> values = ServiceHarness.config(infra, "command");
    values.putAll(ChangelogRole.served(infra, DB, DB, overrides));
    config = TidemarkConfig.from(values);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.ap_salary, public.ap_customer, public.ap_rate, public.ap_ledger, public.ap_entry, public.ap_badge CASCADE",
        "DROP SEQUENCE IF EXISTS public.ap_seq",
        "CREATE SEQUENCE public.ap_seq START 1000",
        "CREATE TABLE public.ap_salary (id int PRIMARY KEY, amount int NOT NULL, note text, stamp timestamptz, bonus int)",
        "CREATE TABLE public.ap_customer (id int PRIMARY KEY, notes text)",
        "CREATE TABLE public.ap_rate (id int PRIMARY KEY, rate int NOT NULL)",
        "CREATE TABLE public.ap_ledger (salary_id int, amount int, rate int, PRIMARY KEY (salary_id, amount))",
        "CREATE FUNCTION public.ap_bonus() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN NEW.bonus := (SELECT rate FROM public.ap_rate WHERE id = 1); RETURN NEW; END $$",
        "CREATE TRIGGER ap_bonus BEFORE UPDATE ON public.ap_salary FOR EACH ROW EXECUTE FUNCTION public.ap_bonus()",
        "CREATE FUNCTION public.ap_book() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " INSERT INTO public.ap_ledger VALUES (NEW.id, NEW.amount, (SELECT rate FROM public.ap_rate WHERE id = 2)); RETURN NULL; END $$",
        "CREATE TRIGGER ap_book AFTER UPDATE ON public.ap_salary FOR EACH ROW EXECUTE FUNCTION public.ap_book()",
        // inserted rows whose values PostgreSQL takes as it writes them: a serial key, now(), a generated column, an
        // identity key, and a BEFORE trigger that fills a column from ap_rate row 1
        "CREATE TABLE public.ap_entry (id serial PRIMARY KEY, amount int NOT NULL, at timestamptz NOT NULL DEFAULT now(),"
            + " doubled int GENERATED ALWAYS AS (amount * 2) STORED)",
        "CREATE TABLE public.ap_badge (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, label text NOT NULL, level int)",
        "CREATE OR REPLACE FUNCTION public.ap_level() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN NEW.level := (SELECT rate FROM public.ap_rate WHERE id = 1); RETURN NEW; END $$",
        "CREATE TRIGGER ap_level BEFORE INSERT ON public.ap_badge FOR EACH ROW EXECUTE FUNCTION public.ap_level()",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.ap_salary, public.ap_customer, public.ap_rate, public.ap_ledger, public.ap_entry,"
            + " public.ap_badge TO tidemark_writer",
        "GRANT USAGE, SELECT ON SEQUENCE public.ap_seq, public.ap_entry_id_seq TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  @BeforeEach
  void seed() {
    sql(infra, DB, "TRUNCATE public.ap_salary, public.ap_customer, public.ap_rate, public.ap_ledger, public.ap_entry, public.ap_badge",
        "INSERT INTO public.ap_salary (id, amount, note) VALUES (1, 100, 'a'), (2, 200, 'b')",
        "INSERT INTO public.ap_customer VALUES (5, 'abc')",
        "INSERT INTO public.ap_rate VALUES (1, 10), (2, 20)");
  }

  // ---- helpers ----

  /** A caller of a Tidemark token made for the test, as the gateway names one after checking it. */
  private Caller agent() {
    String name = "ap-" + UUID.randomUUID().toString().substring(0, 8);
    String id = TestDatabases.strings(infra, DB, "INSERT INTO tidemark.api_token (name, token_hash, pg_role, access) VALUES ('" + name
        + "', '" + UUID.randomUUID() + "', '" + DatabaseSetup.WRITER_ROLE + "', 'read-write') RETURNING id::text").get(0);
    return new Caller(id, name, DatabaseSetup.WRITER_ROLE, Access.READ_WRITE, List.of("*"));
  }

  /** Plans {@code sql} with execute as {@code who}, commits the plan, and returns the proposal it became. */
  private String propose(Caller who, String sql) {
    return proposed(who, "execute", new JsonObject().put("sql", sql)).getString("proposal_id");
  }

  /** Plans {@code args} with {@code tool} as {@code who} and commits the plan: the answer, a proposal, with the commit's arguments. */
  private JsonObject proposed(Caller who, String tool, JsonObject args) {
    JsonObject plan = harness.ok(who, tool, args);
    JsonObject commit = args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", "k-" + UUID.randomUUID());
    JsonObject proposed = harness.ok(who, tool, commit);
    assertEquals("proposed", proposed.getString("mode"), proposed::encode);
    return proposed.put("committed_with", commit);
  }

  /** Runs {@code work} as {@code tidemark proposals} does: in a Vert.x and a pool of its own. */
  private <T> T asPerson(Function<Proposals, Future<T>> work) {
    Vertx vertx = Vertx.vertx();
    try {
      return ServiceHarness.await(work.apply(new Proposals(vertx, config, Pools.create(vertx, config.database()))));
    } finally {
      ServiceHarness.await(vertx.close());
    }
  }

  private JsonObject show(String id) {
    return asPerson(p -> p.show(id));
  }

  private JsonObject approve(String id) {
    return asPerson(p -> p.approve(id, "ada"));
  }

  /** Both tables the change writes, whole: what "nothing was written" compares. */
  private List<String> written() {
    return TestDatabases.strings(infra, DB, "SELECT t FROM (SELECT format('%s', s) FROM public.ap_salary s UNION ALL"
        + " SELECT format('%s', l) FROM public.ap_ledger l) w(t) ORDER BY t COLLATE \"C\"");
  }

  private List<String> audit(JsonObject shown) {
    return shown.getJsonArray("audit").stream().map(a -> ((JsonObject) a).getString("action")).toList();
  }

  /** The row of {@code table} among the rows {@code proposal} shows. */
  private static JsonObject rowOf(JsonObject proposal, String table) {
    return proposal.getJsonArray("rows").stream().map(JsonObject.class::cast).filter(r -> r.getString("table").equals(table))
        .findFirst().orElseThrow(() -> new AssertionError(table + " is not among the rows of " + proposal.encode()));
  }

  /** Approves {@code id} after {@code meanwhile}, and checks that it is refused as stale, naming {@code named}, with nothing written. */
  private JsonObject approvedStale(String id, Runnable meanwhile, String... named) {
    meanwhile.run();
    List<String> before = written();
    JsonObject decided = approve(id);
    assertEquals("stale", decided.getString("status"), decided::encode);
    String reason = decided.getString("reason");
    assertTrue(reason.startsWith("PROPOSAL_STALE: Proposal " + id + " is stale"), reason);
    for (String n : named) {
      assertTrue(reason.contains(n), reason + " names " + n);
    }
    assertEquals(before, written(), "a stale proposal writes nothing");
    assertEquals(List.of("proposed", "approved", "stale"), audit(decided));
    assertEquals("ada", decided.getString("decided_by"));
    return decided;
  }

  // ---- what is shown is what is written ----

  @Test
  void anUnchangedProposalWritesExactlyTheRowsItShowedAsItsProposer() throws Exception {
    Caller agent = agent();
    String id = propose(agent, "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    JsonObject shown = show(id);
    assertEquals(2, shown.getJsonArray("rows").size(), "the row and the row its trigger writes, whole: " + shown.encode());
    JsonObject salary = rowOf(shown, "public.ap_salary");
    assertEquals("UPDATE", salary.getString("op"));
    assertEquals(new JsonObject().put("id", 1).put("amount", 100).put("note", "a").putNull("stamp").putNull("bonus"),
        salary.getJsonObject("before"));
    assertEquals(new JsonObject().put("id", 1).put("amount", 300).put("note", "a").putNull("stamp").put("bonus", 10),
        salary.getJsonObject("after"));
    assertEquals(new JsonArray().add("amount").add("bonus"), salary.getJsonArray("changed"));
    assertEquals(new JsonObject().put("salary_id", 1).put("amount", 300).put("rate", 20), rowOf(shown, "public.ap_ledger").getJsonObject("after"));

    JsonObject decided = approve(id);
    assertEquals("applied", decided.getString("status"), decided::encode);
    assertEquals(List.of("proposed", "approved", "applied"), audit(decided));
    assertEquals(List.of("(1,300,20)", "(1,300,a,,10)", "(2,200,b,,)"), written(), "exactly the after-images shown");

    TestDatabases.awaitDecoded(infra, DB);
    try (Connection c = TestDatabases.jdbc(infra, DB); var ps = c.prepareStatement(
        "SELECT c.table_name, c.after::text, a.caller, a.tool, a.plan_id FROM tidemark.changelog c"
            + " JOIN tidemark.change_attribution a ON a.xid = c.xid WHERE a.plan_id = ? ORDER BY c.id")) {
      ps.setString(1, "proposal:" + id);
      ResultSet r = ps.executeQuery();
      assertTrue(r.next(), "the approved change is in the changelog, attributed");
      assertEquals("ap_salary", r.getString(1));
      assertEquals("{\"id\": 1, \"note\": \"a\", \"bonus\": 10, \"stamp\": null, \"amount\": 300}", r.getString(2));
      assertEquals(agent.name(), r.getString(3), "attributed to its proposer");
      assertEquals("execute", r.getString(4));
      assertTrue(r.next());
      assertEquals("ap_ledger", r.getString(1));
      assertFalse(r.next());
    }
  }

  @Test
  void aValueFromAnotherTableTheAgentChangedMakesTheApprovalStale() {
    Caller agent = agent();
    String id = propose(agent, "UPDATE public.ap_salary SET amount = (SELECT length(notes) FROM public.ap_customer WHERE id = 5) WHERE id = 2");
    assertEquals(3, rowOf(show(id), "public.ap_salary").getJsonObject("after").getInteger("amount"), "the person is shown 3");
    JsonObject decided = approvedStale(id, () -> {
      // the agent writes the table the value comes from, which needs no approval
      JsonObject args = new JsonObject().put("table", "ap_customer").put("key", 5).put("set", new JsonObject().put("notes", "abcde"));
      JsonObject plan = harness.ok(agent, "update_rows", args);
      assertEquals("commit", harness.ok(agent, "update_rows", args.copy().put("plan_id", plan.getString("plan_id"))
          .put("idempotency_key", "k-" + UUID.randomUUID())).getString("mode"));
    }, "public.ap_salary: 1 updated row would be written with other values than shown (amount)", "Nothing was written");
    assertEquals("other_values", decided.getJsonObject("outcome").getJsonArray("differences").getJsonObject(0).getString("difference"));
    assertEquals(List.of("(2,200,b,,)"), TestDatabases.strings(infra, DB, "SELECT format('%s', s) FROM public.ap_salary s WHERE id = 2"));
  }

  @Test
  void nowAtTheApprovalIsAnotherTimeThanShownSoItIsStale() {
    String id = propose(agent(), "UPDATE public.ap_salary SET stamp = now() WHERE id = 1");
    approvedStale(id, () -> { }, "(stamp)");
  }

  @Test
  void randomAtTheApprovalIsAnotherValueThanShownSoItIsStale() {
    String id = propose(agent(), "UPDATE public.ap_salary SET note = random()::text WHERE id = 1");
    approvedStale(id, () -> { }, "(note)");
  }

  @Test
  void aSequenceGivesTheApprovalAnotherValueThanShownSoItIsStale() {
    String id = propose(agent(), "UPDATE public.ap_salary SET amount = nextval('public.ap_seq') WHERE id = 2");
    approvedStale(id, () -> { }, "public.ap_salary", "amount", "public.ap_ledger");
  }

  @Test
  void aTriggerOnTheProtectedTableThatReadsAChangedValueMakesItStale() {
    String id = propose(agent(), "UPDATE public.ap_salary SET amount = 7 WHERE id = 1");
    assertEquals(10, rowOf(show(id), "public.ap_salary").getJsonObject("after").getInteger("bonus"));
    approvedStale(id, () -> sql(infra, DB, "UPDATE public.ap_rate SET rate = 11 WHERE id = 1"), "public.ap_salary", "(bonus)");
  }

  @Test
  void aRowATriggerWritesElsewhereWithAnotherValueMakesItStale() {
    String id = propose(agent(), "UPDATE public.ap_salary SET amount = 8 WHERE id = 1");
    approvedStale(id, () -> sql(infra, DB, "UPDATE public.ap_rate SET rate = 21 WHERE id = 2"),
        "public.ap_ledger: 1 inserted row would be written with other values than shown (rate)");
  }

  @Test
  void aRowThatChangedSinceItWasShownMakesItStaleAndTheProposerProposesAgain() {
    Caller agent = agent();
    String id = propose(agent, "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    // another writer changes the row (and the row's own trigger its bonus)
    approvedStale(id, () -> sql(infra, DB, "UPDATE public.ap_salary SET note = 'c' WHERE id = 1"),
        "public.ap_salary: 1 updated row changed since it was shown (note, bonus)");
    String again = propose(agent, "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    assertEquals("applied", approve(again).getString("status"), "proposed again, it shows the row as it is now");
  }

  @Test
  void aProposalOfAnEarlierVersionWithoutItsRowsIsStale() {
    String id = propose(agent(), "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    sql(infra, DB, "UPDATE tidemark.proposal SET row_images = NULL, images_hash = NULL WHERE id = '" + id + "'");
    approvedStale(id, () -> { }, "made by an earlier version of Tidemark");
  }

  // ---- inserts: written as shown ----

  @Test
  void anInsertWhoseKeyAndTimePostgresqlTakesAsItWritesIsApprovedAndWritesExactlyTheShownRow() throws Exception {
    Caller agent = agent();
    JsonObject proposed = proposed(agent, "execute", new JsonObject().put("sql", "INSERT INTO public.ap_entry (amount) VALUES (5)"));
    String id = proposed.getString("proposal_id");
    JsonObject after = rowOf(show(id), "public.ap_entry").getJsonObject("after");
    int shownId = after.getInteger("id");
    assertEquals(5, after.getInteger("amount"));
    assertEquals(10, after.getInteger("doubled"));

    JsonObject decided = approve(id);
    assertEquals("applied", decided.getString("status"), decided::encode);
    assertEquals(List.of("proposed", "approved", "applied"), audit(decided));
    assertEquals(1, TestDatabases.count(infra, DB, "SELECT count(*) FROM public.ap_entry"));
    assertEquals(1, TestDatabases.count(infra, DB, "SELECT count(*) FROM public.ap_entry WHERE id = " + shownId + " AND amount = 5"
        + " AND doubled = 10 AND at = '" + after.getString("at") + "'::timestamptz"), "the id and the time shown, not new ones");

    // the plan and the proposal drew their ids from the sequence already: a later insert draws a higher one
    int later = Integer.parseInt(TestDatabases.strings(infra, DB,
        "INSERT INTO public.ap_entry (amount) VALUES (6) RETURNING id::text").get(0));
    assertTrue(later > shownId, later + " > " + shownId);

    JsonObject retried = harness.ok(agent, "execute", proposed.getJsonObject("committed_with"));
    assertTrue(retried.getBoolean("replayed"), "the proposer's retry replays the approval's outcome: " + retried.encode());
    TestDatabases.awaitDecoded(infra, DB);
    assertEquals(1, TestDatabases.count(infra, DB, "SELECT count(*) FROM tidemark.changelog c JOIN tidemark.change_attribution a"
        + " ON a.xid = c.xid WHERE a.plan_id = 'proposal:" + id + "' AND a.caller = '" + agent.name() + "' AND c.table_name = 'ap_entry'"),
        "the row is in the changelog, attributed to its proposer and its proposal");
  }

  @Test
  void aNamedInsertIsApprovedAndWritesTheShownRowAsExecutesDoes() {
    Caller agent = agent();
    NamedTool book = NamedTool.fromJson(new JsonObject().put("name", "book_entry").put("description", "Books one amount.")
        .put("kind", "change").put("statement", "INSERT INTO public.ap_entry (amount) VALUES ($1)")
        .put("parameters", new JsonArray().add(new JsonObject().put("name", "amount").put("type", "integer")))
        .put("roles", new JsonArray().add(DatabaseSetup.WRITER_ROLE)));
    JsonObject args = new JsonObject().put("amount", 7);
    JsonObject plan = named(agent, book, args);
    JsonObject proposed = named(agent, book, args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", "k-" + UUID.randomUUID()));
    assertEquals("proposed", proposed.getString("mode"), proposed::encode);
    String id = proposed.getString("proposal_id");
    int shownId = rowOf(show(id), "public.ap_entry").getJsonObject("after").getInteger("id");

    // run again, the insert would draw another id from the sequence and be stale
    JsonObject decided = approve(id);
    assertEquals("applied", decided.getString("status"), decided::encode);
    assertEquals("book_entry", decided.getString("tool"));
    assertEquals(List.of(shownId + ":7"), TestDatabases.strings(infra, DB, "SELECT id || ':' || amount FROM public.ap_entry"));
  }

  /** A named tool's call as {@code who} that must succeed: its structured content. */
  private JsonObject named(Caller who, NamedTool tool, JsonObject args) {
    ToolReply reply = harness.call(who, tool, args);
    assertNull(reply.error(), () -> reply.toJson().encode());
    return reply.structured();
  }

  @Test
  void anIdentityAlwaysKeyIsWrittenAsShown() {
    String id = proposed(agent(), "insert_rows", new JsonObject().put("table", "ap_badge")
        .put("rows", new JsonArray().add(new JsonObject().put("label", "gold")))).getString("proposal_id");
    JsonObject after = rowOf(show(id), "public.ap_badge").getJsonObject("after");
    assertEquals("gold", after.getString("label"));
    assertEquals(10, after.getInteger("level"), "the BEFORE trigger's value, shown");

    JsonObject decided = approve(id);
    assertEquals("applied", decided.getString("status"), decided::encode);
    assertEquals(List.of("(" + after.getInteger("id") + ",gold,10)"),
        TestDatabases.strings(infra, DB, "SELECT format('%s', b) FROM public.ap_badge b"));
  }

  @Test
  void aBeforeTriggerThatChangesAnInsertedRowMakesItStale() {
    String id = proposed(agent(), "insert_rows", new JsonObject().put("table", "ap_badge")
        .put("rows", new JsonArray().add(new JsonObject().put("label", "gold")))).getString("proposal_id");
    approvedStale(id, () -> sql(infra, DB, "UPDATE public.ap_rate SET rate = 11 WHERE id = 1"),
        "public.ap_badge: 1 inserted row would be written with other values than shown (level)");
    assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM public.ap_badge"), "nothing was inserted");
  }

  @Test
  void aTransactionOfInsertsIsWrittenAsShownAlsoWhereALaterStatementTookCurrval() {
    JsonObject args = new JsonObject().put("statements", new JsonArray()
        .add(new JsonObject().put("sql", "INSERT INTO public.ap_entry (amount) VALUES (1)"))
        .add(new JsonObject().put("sql", "INSERT INTO public.ap_entry (id, amount) VALUES (currval('public.ap_entry_id_seq') + 1000, 2)")));
    String id = proposed(agent(), "transaction", args).getString("proposal_id");
    JsonArray shown = show(id).getJsonArray("rows");
    int first = shown.getJsonObject(0).getJsonObject("after").getInteger("id");
    assertEquals(first + 1000, shown.getJsonObject(1).getJsonObject("after").getInteger("id"), "the key the second statement took");

    JsonObject decided = approve(id);
    assertEquals("applied", decided.getString("status"), decided::encode);
    assertEquals(List.of(first + ":1", (first + 1000) + ":2"),
        TestDatabases.strings(infra, DB, "SELECT id || ':' || amount FROM public.ap_entry ORDER BY id"));
  }

  @Test
  void anInsertWhoseRowsComeFromATableRunsAgainSoItsSequenceMakesItStale() {
    String id = propose(agent(), "INSERT INTO public.ap_entry (amount) SELECT rate FROM public.ap_rate WHERE id = 1");
    approvedStale(id, () -> { }, "public.ap_entry: 1 inserted row would be written with other values than shown (id, at)");
    assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM public.ap_entry"));
  }

  @Test
  void aRoleThatMayInsertOnlySomeColumnsHasItsInsertRunAgainAndItsSequenceMakesItStale() {
    String id = propose(agent(), "INSERT INTO public.ap_entry (amount) VALUES (5)");
    // the shown id and time cannot be written as a role that may insert only amount: the insert runs again, as any change
    sql(infra, DB, "REVOKE INSERT ON public.ap_entry FROM tidemark_writer", "GRANT INSERT (amount) ON public.ap_entry TO tidemark_writer");
    try {
      approvedStale(id, () -> { }, "public.ap_entry: 1 inserted row would be written with other values than shown (id, at)");
      assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM public.ap_entry"));
    } finally {
      sql(infra, DB, "REVOKE INSERT (amount) ON public.ap_entry FROM tidemark_writer", "GRANT INSERT ON public.ap_entry TO tidemark_writer");
    }
  }

  // ---- void ----

  @Test
  void aProposalWhoseTokenWasRevokedIsVoidAndWritesNothing() {
    Caller agent = agent();
    String id = propose(agent, "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    sql(infra, DB, "UPDATE tidemark.api_token SET revoked_at = now() WHERE id = '" + agent.id() + "'");
    List<String> before = written();
    JsonObject decided = approve(id);
    assertEquals("void", decided.getString("status"), decided::encode);
    assertTrue(decided.getString("reason").startsWith("PROPOSAL_VOID: Proposal " + id + " is void"), decided.getString("reason"));
    assertTrue(decided.getString("reason").contains("its token was revoked"), decided.getString("reason"));
    assertEquals(before, written());
    assertEquals(List.of("proposed", "approved", "void"), audit(decided));
    assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM tidemark.change_attribution WHERE plan_id = 'proposal:" + id + "'"),
        "nothing is attributed to the revoked caller");
  }

  @Test
  void aProposalWhoseTokenExpiredIsVoid() {
    Caller agent = agent();
    String id = propose(agent, "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    sql(infra, DB, "UPDATE tidemark.api_token SET expires_at = now() - interval '1 second' WHERE id = '" + agent.id() + "'");
    JsonObject decided = approve(id);
    assertEquals("void", decided.getString("status"));
    assertTrue(decided.getString("reason").contains("its token expired"), decided.getString("reason"));
    assertEquals(List.of("(1,100,a,,)", "(2,200,b,,)"), written());
  }

  @Test
  void aProposalWhoseRoleLostTheUpdatePrivilegeIsVoid() {
    String id = propose(agent(), "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    sql(infra, DB, "REVOKE UPDATE ON public.ap_salary FROM tidemark_writer");
    try {
      JsonObject decided = approve(id);
      assertEquals("void", decided.getString("status"), decided::encode);
      assertTrue(decided.getString("reason").contains("its proposer's role tidemark_writer may no longer make this change"),
          decided.getString("reason"));
      assertEquals(List.of("(1,100,a,,)", "(2,200,b,,)"), written());
      assertEquals(List.of("proposed", "approved", "void"), audit(decided));
    } finally {
      sql(infra, DB, "GRANT UPDATE ON public.ap_salary TO tidemark_writer");
    }
  }

  // ---- one decision ----

  @Test
  void twoApprovalsAtOnceRecordExactlyOneDecision() throws Exception {
    String id = propose(agent(), "UPDATE public.ap_salary SET amount = 400 WHERE id = 2");
    Vertx first = Vertx.vertx();
    Vertx second = Vertx.vertx();
    try (Connection holder = TestDatabases.jdbc(infra, DB)) {
      // the row is held, so the first approval waits inside its change while the second arrives
      holder.setAutoCommit(false);
      holder.createStatement().execute("SELECT * FROM public.ap_salary WHERE id = 2 FOR UPDATE");
      Future<JsonObject> a = new Proposals(first, config, Pools.create(first, config.database())).approve(id, "ada");
      Future<JsonObject> b = new Proposals(second, config, Pools.create(second, config.database())).approve(id, "bob");
      Await.that("both approvals wait: one on the row, one on the proposal", Duration.ofSeconds(30), () -> TestDatabases.count(infra, DB,
          "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()") >= 2);
      holder.rollback();
      List<Future<JsonObject>> both = List.of(a, b);
      Await.that("both approvals end", Duration.ofSeconds(60), () -> both.stream().allMatch(Future::isComplete));
      assertEquals(1, both.stream().filter(Future::succeeded).count(), () -> both.stream().map(f -> f.succeeded()
          ? f.result().encode() : String.valueOf(f.cause())).toList().toString());
      JsonObject decided = both.stream().filter(Future::succeeded).findFirst().orElseThrow().result();
      assertEquals("applied", decided.getString("status"));
      Throwable refused = both.stream().filter(Future::failed).findFirst().orElseThrow().cause();
      assertTrue(refused instanceof ToolException te && te.getMessage().contains("is applied already"), String.valueOf(refused));
    } finally {
      ServiceHarness.await(first.close());
      ServiceHarness.await(second.close());
    }
    JsonObject shown = show(id);
    assertEquals(List.of("proposed", "approved", "applied"), audit(shown), "exactly one decision");
    assertEquals(List.of("(2,400,20)"), TestDatabases.strings(infra, DB, "SELECT format('%s', l) FROM public.ap_ledger l"),
        "applied once");
  }

  @Test
  void aRejectionOfAProposalAnApprovalWroteRecordsItAppliedInstead() {
    String id = propose(agent(), "UPDATE public.ap_salary SET amount = 300 WHERE id = 1");
    // what an approval that stopped right after its commit leaves: the outcome under the proposer's key, the proposal pending
    sql(infra, DB, "INSERT INTO tidemark.idempotency (caller, key, input_hash, outcome) SELECT caller_id, idempotency_key, input_hash,"
        + " '{\"summary\": \"execute: committed — the change updates 1 row in public.ap_salary.\", \"structured_text\": \"{}\"}'"
        + " FROM tidemark.proposal WHERE id = '" + id + "'");
    ToolException refused = org.junit.jupiter.api.Assertions.assertThrows(ToolException.class,
        () -> asPerson(p -> p.reject(id, "bob", "no")));
    assertTrue(refused.getMessage().contains("was applied already"), refused.getMessage());
    JsonObject shown = show(id);
    assertEquals("applied", shown.getString("status"));
    assertEquals(List.of("proposed", "applied"), audit(shown));
  }
}
