package dev.tidemark.query;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.keys.ChangeCursor;
import dev.tidemark.keys.KeyRing;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * changes_since and status over what the relay stored: pages in commit order, only tables the
 * caller may read, cursors that are forged, older than retention, or from before a lost slot. The
 * query role and the relay run on harnesses of their own, so tests stop and start the relay alone.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChangesSinceIT {

  static final String DB = "changes_since_it";
  static final String NAME = "csit";
  static final Duration WAIT = Duration.ofSeconds(60);

  private SharedInfra infra;
  private ServiceHarness server;
  private ServiceHarness relay;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB,
        "CREATE TABLE IF NOT EXISTS public.z (id int PRIMARY KEY, v int NOT NULL)",
        "CREATE TABLE IF NOT EXISTS public.secret_notes (id int PRIMARY KEY, body text)",
        "REVOKE ALL ON public.secret_notes FROM tidemark_reader, tidemark_writer",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.z TO tidemark_writer");
    server = QueryRole.start(infra, ChangelogRole.served(infra, DB, NAME, Map.of()));
    relay = startRelay(Map.of());
    TestDatabases.awaitDecoded(infra, DB);
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(relay, server);
  }

  private ServiceHarness startRelay(Map<ConfigKey, String> overrides) {
    return ChangelogRole.start(infra, DB, NAME, overrides);
  }

  private String head() {
    return server.ok(ServiceHarness.WRITER, "status", new JsonObject()).getString("changelog_head");
  }

  private JsonObject since(dev.tidemark.contract.Caller who, JsonObject arguments) {
    return server.ok(who, "changes_since", arguments);
  }

  private static List<JsonObject> changes(JsonObject structured) {
    return structured.getJsonArray("changes").stream().map(JsonObject.class::cast).toList();
  }

  @Test
  @Order(1)
  void changesSinceTheStatusHeadListsLaterChangesInOrderAndOnlyTablesTheCallerMayRead() {
    String head = head();
    sql(infra, DB, "INSERT INTO public.z VALUES (400, 1)", "INSERT INTO public.secret_notes VALUES (1, 'hidden')",
        "UPDATE public.z SET v = 2 WHERE id = 400", "DELETE FROM public.z WHERE id = 400");
    TestDatabases.awaitDecoded(infra, DB);

    JsonObject page = since(ServiceHarness.WRITER, new JsonObject().put("cursor", head).put("limit", 2));
    assertEquals(List.of("INSERT", "UPDATE"), changes(page).stream().map(c -> c.getString("op")).toList(),
        "secret_notes is left out: tidemark_writer may not read it");
    assertEquals(true, page.getBoolean("has_more"));
    JsonObject update = changes(page).get(1);
    assertEquals(new JsonObject().put("id", 400).put("v", 1), update.getJsonObject("before"));
    assertEquals(new JsonObject().put("id", 400).put("v", 2), update.getJsonObject("after"));

    JsonObject rest = since(ServiceHarness.WRITER, new JsonObject().put("cursor", page.getString("next_cursor")));
    assertEquals(List.of("DELETE"), changes(rest).stream().map(c -> c.getString("op")).toList());
    assertEquals(false, rest.getBoolean("has_more"));
    JsonObject none = since(ServiceHarness.WRITER, new JsonObject().put("cursor", rest.getString("next_cursor")));
    assertEquals(0, none.getJsonArray("changes").size());

    JsonObject filtered = since(ServiceHarness.READER, new JsonObject().put("cursor", head)
        .put("tables", new JsonArray().add("public.secret_notes")));
    assertEquals(0, filtered.getJsonArray("changes").size(), "a table the caller cannot SELECT shows nothing");
    JsonObject onlyZ = since(ServiceHarness.READER, new JsonObject().put("cursor", head).put("tables", new JsonArray().add("z")));
    assertEquals(3, onlyZ.getJsonArray("changes").size());
  }

  /**
   * A change of a table without a primary key is keyed by its row; when the table gains a key
   * later, that row key still shows only the columns the caller may read.
   */
  @Test
  @Order(1)
  void aRowKeyCapturedBeforeTheTableHadAPrimaryKeyShowsOnlyReadableColumns() {
    sql(infra, DB, "DROP TABLE IF EXISTS public.keyless",
        "CREATE TABLE public.keyless (id int NOT NULL, v int, secret text)",
        "REVOKE ALL ON public.keyless FROM tidemark_reader",
        "GRANT SELECT (id, v) ON public.keyless TO tidemark_reader");
    Await.that("public.keyless in the publication", WAIT, () -> TestDatabases.strings(infra, DB,
        "SELECT published::text FROM tidemark.captured_table WHERE relid = 'public.keyless'::regclass").equals(List.of("true")));
    String head = head();
    sql(infra, DB, "INSERT INTO public.keyless VALUES (1, 2, 'not for the reader')");
    TestDatabases.awaitDecoded(infra, DB);
    JsonObject before = changes(since(ServiceHarness.READER, new JsonObject().put("cursor", head)
        .put("tables", new JsonArray().add("keyless")))).get(0);
    assertEquals(new JsonObject().put("id", 1).put("v", 2), before.getJsonObject("key"), before.encode());

    sql(infra, DB, "ALTER TABLE public.keyless ADD PRIMARY KEY (id)");
    TestDatabases.awaitDecoded(infra, DB);
    Await.that("the capture to follow the new key", WAIT, () -> !TestDatabases.strings(infra, DB,
        "SELECT key_columns::text FROM tidemark.captured_table WHERE relid = 'public.keyless'::regclass").equals(List.of("{}")));
    JsonObject after = changes(since(ServiceHarness.READER, new JsonObject().put("cursor", head)
        .put("tables", new JsonArray().add("keyless")))).get(0);
    assertFalse(after.encode().contains("not for the reader"), after.encode());
    assertEquals(new JsonObject().put("id", 1).put("v", 2), after.getJsonObject("key"), after.encode());
  }

  @Test
  @Order(2)
  void aForgedOrMalformedCursorIsInvalidAndSaysToStartFromTheStatusHead() {
    char[] forged = head().toCharArray();
    forged[3] = forged[3] == 'A' ? 'B' : 'A';
    for (String cursor : List.of(new String(forged), "not-a-cursor", ChangeCursor.encode(new ChangePosition(1, 1), otherDatabasesKeys()))) {
      JsonObject error = server.error(ServiceHarness.READER, "changes_since", new JsonObject().put("cursor", cursor), "INVALID_CURSOR");
      assertTrue(error.getString("message").contains("changelog_head that status reports"), error.getString("message"));
    }
  }

  @Test
  @Order(3)
  void aCursorOlderThanRetentionIsExpiredAndSaysToStartFromTheStatusHead() {
    relay.close();
    relay = startRelay(Map.of(ConfigKey.CHANGELOG_RETENTION_SECONDS, "1", ConfigKey.CHANGELOG_PRUNE_INTERVAL_SECONDS, "1"));
    String old = head();
    sql(infra, DB, "INSERT INTO public.z VALUES (500, 1)", "UPDATE public.z SET v = 2 WHERE id = 500");
    JsonObject[] error = new JsonObject[1];
    Await.that("the cursor to expire", WAIT, () -> {
      error[0] = server.call(ServiceHarness.WRITER, "changes_since", new JsonObject().put("cursor", old)).error();
      return error[0] != null;
    });
    assertEquals("CURSOR_EXPIRED", error[0].getString("code"), error[0]::encode);
    assertTrue(error[0].getString("message").contains("changelog_head"), error[0].getString("message"));
    JsonObject again = since(ServiceHarness.WRITER, new JsonObject().put("cursor", head()));
    assertFalse(again.getBoolean("has_more"), "the head after pruning is a valid cursor");
  }

  @Test
  @Order(4)
  void aLostSlotIsReplacedAndEveryCursorFromBeforeIsExpired() {
    relay.close();
    relay = startRelay(Map.of());
    sql(infra, DB, "INSERT INTO public.z VALUES (600, 1)");
    TestDatabases.awaitDecoded(infra, DB);
    String old = head();
    relay.close();
    relay = null;
    // the server loses the slot (dropped, or invalidated past max_slot_wal_keep_size) with a change in it
    sql(infra, DB, "UPDATE public.z SET v = 2 WHERE id = 600",
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database()");
    relay = startRelay(Map.of());
    Await.that("a new slot", WAIT, () -> TestDatabases.count(infra, DB,
        "SELECT count(*) FROM pg_replication_slots WHERE database = current_database() AND active") == 1);
    server.error(ServiceHarness.WRITER, "changes_since", new JsonObject().put("cursor", old), "CURSOR_EXPIRED");
    String fresh = head();
    sql(infra, DB, "UPDATE public.z SET v = 3 WHERE id = 600");
    TestDatabases.awaitDecoded(infra, DB);
    JsonObject again = since(ServiceHarness.WRITER, new JsonObject().put("cursor", fresh));
    assertEquals(1, again.getJsonArray("changes").size(), again::encode);
    assertEquals(3, again.getJsonArray("changes").getJsonObject(0).getJsonObject("after").getInteger("v"));
  }

  /** A key ring of another database: the same key id, another secret. */
  private static KeyRing otherDatabasesKeys() {
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    return new KeyRing(List.of(new KeyRing.Key(1, secret, 0, Long.MAX_VALUE)));
  }
}
