package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ChangeNotice;
import dev.tidemark.contract.SchemaChangeNotice;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two gateways in one cluster, A also running the changelog role: a change made with plain SQL
 * reaches the local change address of both nodes, once each.
 */
@ExtendWith(InfraExtension.class)
class ChangeFanOutClusterIT {

  static final String DB = "fanout_it";
  static final String NAME = "fanit";

  private TidemarkNode a;
  private TidemarkNode b;

  @AfterEach
  void stop() {
    TestNodes.stop(b);
    TestNodes.stop(a);
  }

  @Test
  void aPlainSqlChangeAndATableCreationReachTheLocalAddressesOfBothGatewaysOnceEach(SharedInfra infra) throws Exception {
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.fan (id int PRIMARY KEY, v int)");
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> va = ChangelogFixtures.config(infra, DB, NAME, cluster, ports[0], members, "gateway,changelog");
    va.put(ConfigKey.NODE_ID, "node-a");
    Map<ConfigKey, String> vb = ChangelogFixtures.config(infra, DB, NAME, cluster, ports[1], members, "gateway");
    vb.put(ConfigKey.NODE_ID, "node-b");
    a = TestNodes.start(va);
    b = TestNodes.start(vb);
    assertEquals(2, b.clusterSize());

    BlockingQueue<ChangeNotice> atA = new LinkedBlockingQueue<>();
    BlockingQueue<ChangeNotice> atB = new LinkedBlockingQueue<>();
    BlockingQueue<SchemaChangeNotice> ddlAtA = new LinkedBlockingQueue<>();
    BlockingQueue<SchemaChangeNotice> ddlAtB = new LinkedBlockingQueue<>();
    TestNodes.await(a.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> atA.add(ChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());
    TestNodes.await(b.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> atB.add(ChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());
    TestNodes.await(a.vertx().eventBus().<JsonObject>localConsumer(Addresses.schemaChanges(NAME), m -> ddlAtA.add(SchemaChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());
    TestNodes.await(b.vertx().eventBus().<JsonObject>localConsumer(Addresses.schemaChanges(NAME), m -> ddlAtB.add(SchemaChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());

    int id = (int) (System.nanoTime() & 0xffffff);
    sql(infra, DB, "INSERT INTO public.fan VALUES (" + id + ", 1)");
    for (BlockingQueue<ChangeNotice> queue : java.util.List.of(atA, atB)) {
      ChangeNotice notice = next(queue, id);
      assertEquals("public", notice.schema());
      assertEquals("fan", notice.table());
      assertEquals("INSERT", notice.op());
      assertEquals(new JsonArray().add(id), notice.key());
      assertNotNull(notice.position());
    }
    sql(infra, DB, "UPDATE public.fan SET v = 2 WHERE id = " + id);
    assertEquals("UPDATE", next(atA, id).op());
    assertEquals("UPDATE", next(atB, id).op());
    assertNull(atA.poll(300, TimeUnit.MILLISECONDS), "one notice per change on a node, not one per gateway");

    sql(infra, DB, "DROP TABLE IF EXISTS public.fan_new", "CREATE TABLE public.fan_new (id int PRIMARY KEY)");
    for (BlockingQueue<SchemaChangeNotice> queue : java.util.List.of(ddlAtA, ddlAtB)) {
      SchemaChangeNotice ddl;
      do {
        ddl = queue.poll(30, TimeUnit.SECONDS);
        assertNotNull(ddl, "a schema change notice");
      } while (!"CREATE TABLE".equals(ddl.command()));
      assertEquals("fan_new", ddl.object());
    }
  }

  /** The next notice for row {@code id}, skipping notices of other rows; fails after 30 s. */
  private static ChangeNotice next(BlockingQueue<ChangeNotice> queue, int id) throws InterruptedException {
    while (true) {
      ChangeNotice n = queue.poll(30, TimeUnit.SECONDS);
      assertNotNull(n, "a change notice for row " + id);
      if (n.key() instanceof JsonArray k && k.getInteger(0) == id) {
        return n;
      }
    }
  }
}
