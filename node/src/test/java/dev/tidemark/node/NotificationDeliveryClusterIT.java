package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several subscribers on two gateways, each subscribed to several resources that one change
 * touches (the table, rows, {@code tidemark://changes}; overlapping between subscribers), while
 * changes commit through Tidemark's change tools and with plain SQL, in rounds of two changes each,
 * first on a quiet machine and then with every core kept busy by the test itself. After each round
 * every subscriber must hear every resource of its own the round touched; a notification may cover
 * both changes of a round (resources.md: one per resource per 20 ms), but none may be missing, and
 * each GET stream's event ids must go up by one, without gaps. One subscriber is away for a round
 * and resumes on the other gateway with Last-Event-ID: it gets exactly what it missed.
 */
@ExtendWith(InfraExtension.class)
class NotificationDeliveryClusterIT {

  static final String TABLE = "notify_load";
  static final int ROWS = 4;
  static final int QUIET_ROUNDS = 8;
  static final int BUSY_ROUNDS = 8;
  /** Longer than the 20 ms a gateway waits between two notifications of one resource, with room for the pipeline. */
  static final long QUIET_GAP_MILLIS = 150;
  static final Duration ROUND_TIMEOUT = Duration.ofSeconds(15);

  /** One notification as a subscriber received it. */
  record Heard(String uri, String eventId, long atNanos) {}

  /** A 2025-11-25 session (its GET stream) or a 2026-07-28 listen stream, and what it heard. */
  static final class Subscriber {
    final String name;
    final Set<String> uris;
    final McpHttpClient session;
    SseStream stream;
    final List<Heard> heard = new ArrayList<>();

    Subscriber(String name, Set<String> uris, McpHttpClient session) {
      this.name = name;
      this.uris = uris;
      this.session = session;
    }

    /** Takes what the stream carried so far. */
    void drain() {
      try {
        McpHttpClient.SseEvent e;
        while (stream != null && (e = stream.next(0)) != null) {
          if ("notifications/resources/updated".equals(e.data().getString("method"))) {
            heard.add(new Heard(e.data().getJsonObject("params").getString("uri"), e.id(), System.nanoTime()));
          } else if (e.id() != null) {
            heard.add(new Heard(null, e.id(), System.nanoTime())); // another event of the GET stream: it has an id too
          }
        }
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new AssertionError(ex);
      }
    }

    boolean heardSince(String uri, long sinceNanos) {
      return heard.stream().anyMatch(h -> uri.equals(h.uri()) && h.atNanos() > sinceNanos);
    }

    String lastEventId() {
      for (int i = heard.size() - 1; i >= 0; i--) {
        if (heard.get(i).eventId() != null) {
          return heard.get(i).eventId();
        }
      }
      return null;
    }
  }

  @Test
  void everySubscriberOnEitherGatewayHearsEveryResourceOfItsOwnThatAChangeTouchesQuietAndUnderLoad(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    try (Connection c = TestNodes.jdbc(infra)) {
      c.createStatement().execute("DROP TABLE IF EXISTS public." + TABLE);
      c.createStatement().execute("CREATE TABLE public." + TABLE + " (id int PRIMARY KEY, v int NOT NULL DEFAULT 0)");
      c.createStatement().execute("INSERT INTO public." + TABLE + " SELECT g, 0 FROM generate_series(1, " + ROWS + ") g");
      c.createStatement().execute("GRANT SELECT ON public." + TABLE + " TO tidemark_reader");
      c.createStatement().execute("GRANT SELECT, UPDATE ON public." + TABLE + " TO tidemark_writer");
    }
    List<Subscriber> subscribers = new ArrayList<>();
    ExecutorService burners = Executors.newFixedThreadPool(2 * Runtime.getRuntime().availableProcessors());
    AtomicBoolean burning = new AtomicBoolean();
    try (TestNodes.GatewayPair pair = TestNodes.GatewayPair.start(infra);
        McpHttpClient writer = new McpHttpClient(TestNodes.mcpUrl(pair.a()), TestNodes.READ_WRITE_TOKEN);
        Connection sql = TestNodes.jdbc(infra);
        PreparedStatement update = sql.prepareStatement("UPDATE public." + TABLE + " SET v = v + 1 WHERE id = ?")) {
      writer.initialize();
      List<String> gateways = List.of(TestNodes.mcpUrl(pair.a()), TestNodes.mcpUrl(pair.b()));
      String table = "tidemark://table/" + TABLE;
      // six sessions, three streams on each gateway, each subscribed through the other gateway than its stream's
      for (int s = 0; s < 6; s++) {
        Set<String> uris = new TreeSet<>(List.of(table, row(1 + s % ROWS), row(1 + (s + 1) % ROWS)));
        if (s % 2 == 0) {
          uris.add("tidemark://changes");
        }
        McpHttpClient session = new McpHttpClient(gateways.get((s + 1) % 2), TestNodes.READ_ONLY_TOKEN);
        session.initialize();
        for (String uri : uris) {
          JsonObject answer = session.rpc("resources/subscribe", new JsonObject().put("uri", uri));
          assertEquals(new JsonObject(), answer.getJsonObject("result"), answer::encode);
        }
        Subscriber sub = new Subscriber("session " + s + " (stream on " + (s % 2 == 0 ? "A" : "B") + ")", uris, session);
        sub.stream = SseStream.open(HttpMethod.GET, gateways.get(s % 2), GatewayClusterIT.streamHeaders(session, null), null);
        assertEquals(200, sub.stream.status());
        SseStream opened = sub.stream;
        Await.that("the GET stream's first bytes", ROUND_TIMEOUT, () -> !opened.text().isEmpty());
        assertTrue(opened.text().startsWith("retry: 1000\n\n"), "it tells the client how long to wait before reconnecting: " + opened.text());
        subscribers.add(sub);
      }
      // a 2026-07-28 listen stream on B beside them
      Subscriber listener = new Subscriber("listen stream on B", new TreeSet<>(List.of(table, row(1), row(3))), null);
      listener.stream = SseStream.open(HttpMethod.POST, gateways.get(1), TestNodes.listenHeaders(TestNodes.READ_ONLY_TOKEN),
          TestNodes.listenRequest("load", List.copyOf(listener.uris)).toBuffer());
      assertEquals("notifications/subscriptions/acknowledged", listener.stream.next(15_000).data().getString("method"));
      subscribers.add(listener);

      int round = 0;
      for (; round < QUIET_ROUNDS; round++) {
        round(round, subscribers, writer, update, gateways, null);
      }
      // one session is away for a round, then resumes on the other gateway from the last id it saw
      Subscriber away = subscribers.get(0);
      away.drain();
      away.stream.close();
      away.stream = null;
      round(round++, subscribers, writer, update, gateways, away);
      String resumeFrom = away.lastEventId();
      int before = away.heard.size();
      away.stream = SseStream.open(HttpMethod.GET, gateways.get(1), GatewayClusterIT.streamHeaders(away.session, resumeFrom), null);
      assertEquals(200, away.stream.status());
      long resumed = System.nanoTime() - 1;
      Set<String> missed = new TreeSet<>(away.uris);
      missed.retainAll(touched(round - 1));
      Await.that("the resumed session to get what it missed", ROUND_TIMEOUT, () -> {
        away.drain();
        return missed.stream().allMatch(uri -> away.heardSince(uri, resumed));
      });
      assertEquals(SseStream.seqOf(resumeFrom) + 1, SseStream.seqOf(away.heard.get(before).eventId()),
          "the replay starts right after the last id the client saw");

      burning.set(true);
      for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
        burners.submit(() -> {
          long spin = 0;
          while (burning.get()) {
            spin++;
          }
          return spin;
        });
      }
      for (int end = round + BUSY_ROUNDS; round < end; round++) {
        round(round, subscribers, writer, update, gateways, null);
      }
      burning.set(false);

      for (Subscriber sub : subscribers) {
        sub.drain();
        if (sub.session == null) {
          continue; // a listen stream's events carry no ids
        }
        List<Long> seqs = sub.heard.stream().map(h -> SseStream.seqOf(h.eventId())).toList();
        for (int i = 1; i < seqs.size(); i++) {
          assertEquals(seqs.get(i - 1) + 1, seqs.get(i), sub.name + ": event ids go up by one, without gaps: " + seqs);
        }
      }
    } finally {
      burning.set(false);
      burners.shutdownNow();
      for (Subscriber sub : subscribers) {
        if (sub.stream != null) {
          sub.stream.close();
        }
        if (sub.session != null) {
          sub.session.close();
        }
      }
    }
  }

  static String row(int id) {
    return "tidemark://row/" + TABLE + "/" + id;
  }

  /** The rows round {@code r} changes: one with plain SQL, the next through update_rows. */
  static int[] rowsOf(int r) {
    return new int[] {1 + r % ROWS, 1 + (r + 1) % ROWS};
  }

  static Set<String> touched(int r) {
    int[] rows = rowsOf(r);
    return Set.of("tidemark://table/" + TABLE, "tidemark://changes", row(rows[0]), row(rows[1]));
  }

  /**
   * Waits until no subscriber heard anything for {@link #QUIET_GAP_MILLIS}, so that nothing of the
   * last round arrives in this one; commits the round's two changes; then waits until every
   * subscriber (but {@code away}) heard each of its resources the round touched, after the round began.
   */
  private static void round(int r, List<Subscriber> subscribers, McpHttpClient writer, PreparedStatement update, List<String> gateways,
      Subscriber away) throws Exception {
    long[] last = {0};
    Await.that("the subscribers to go quiet before round " + r, ROUND_TIMEOUT, () -> {
      subscribers.forEach(Subscriber::drain);
      subscribers.stream().flatMap(s -> s.heard.stream()).mapToLong(Heard::atNanos).max().ifPresent(n -> last[0] = n);
      return System.nanoTime() - last[0] > TimeUnit.MILLISECONDS.toNanos(QUIET_GAP_MILLIS);
    });
    long began = System.nanoTime();
    int[] rows = rowsOf(r);
    update.setInt(1, rows[0]);
    assertEquals(1, update.executeUpdate());
    writer.at(gateways.get(r % 2));
    JsonObject args = new JsonObject().put("table", TABLE).put("key", rows[1]).put("set", new JsonObject().put("v", r));
    JsonObject plan = ToolResults.ok(writer, "update_rows", args);
    ToolResults.ok(writer, "update_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", "notify-load-" + began));
    Map<String, Set<String>> missing = new LinkedHashMap<>();
    boolean heard = Await.until(() -> {
      missing.clear();
      for (Subscriber sub : subscribers) {
        if (sub == away) {
          continue;
        }
        sub.drain();
        Set<String> want = new TreeSet<>(sub.uris);
        want.retainAll(touched(r));
        want.removeIf(uri -> sub.heardSince(uri, began));
        if (!want.isEmpty()) {
          missing.put(sub.name, want);
        }
      }
      return missing.isEmpty();
    }, ROUND_TIMEOUT);
    assertTrue(heard, "round " + r + " (rows " + rows[0] + " with SQL, " + rows[1] + " with update_rows): notifications missing after "
        + ROUND_TIMEOUT + ": " + missing);
  }
}
