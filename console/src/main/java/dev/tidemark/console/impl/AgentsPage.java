package dev.tidemark.console.impl;

import dev.tidemark.contract.ToolCalls;
import dev.tidemark.auth.TokenStore;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.ToolCatalog;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The agents at work, for administrators: each caller with its sessions (the cluster's session
 * map) and open streams, its calls per tool and errors per code over the last hour, and the calls
 * refused by the rate limit or the per-caller queue (every node's gateway activity); and every
 * events consumer with its lag, leased, pending, redelivered and dead-lettered counts, as
 * {@code events_status} reports them to the consumer's owner.
 */
final class AgentsPage {

  private static final String CONSUMERS = "SELECT owner, name, array_to_string(tables, ', ') AS tables FROM tidemark.event_consumer ORDER BY owner, name";

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final Map<String, Pool> pools;
  private final TokenStore tokens;
  private final ActivityBoard board;

  AgentsPage(Vertx vertx, TidemarkConfig config, Map<String, Pool> pools, TokenStore tokens, ActivityBoard board) {
    this.vertx = vertx;
    this.config = config;
    this.pools = pools;
    this.tokens = tokens;
    this.board = board;
  }

  /** A caller's row: summed over the nodes. */
  private static final class Seen {
    String name;
    int sessions;
    int streams;
    final Map<String, Long> calls = new TreeMap<>();
    final Map<String, Long> errors = new TreeMap<>();
    long rateLimited;
    long queueRefused;
  }

  Future<Html> render(Req r) {
    Future<List<JsonObject>> tokenList = tokens.list();
    Future<Map<String, JsonObject>> sessions = vertx.sharedData().<String, JsonObject>getAsyncMap(Addresses.SESSIONS_MAP)
        .compose(AsyncMap::entries);
    Future<List<JsonObject>> reports = board.all();
    return Future.all(tokenList, sessions, reports).compose(x -> {
      Map<String, JsonObject> tokenById = new HashMap<>();
      tokenList.result().forEach(t -> tokenById.put(t.getString("id"), t));
      Map<String, Seen> callers = new TreeMap<>();
      sessions.result().values().forEach(s -> seen(callers, tokenById, s.getString("caller_id"), null).sessions++);
      List<String> nodes = new ArrayList<>();
      for (JsonObject report : reports.result()) {
        nodes.add(report.getString("node"));
        report.getJsonObject("callers", new JsonObject()).forEach(e -> {
          JsonObject c = (JsonObject) e.getValue();
          Seen s = seen(callers, tokenById, e.getKey(), c.getString("name"));
          s.streams += c.getInteger("streams", 0);
          c.getJsonObject("calls", new JsonObject()).forEach(t -> s.calls.merge(t.getKey(), ((Number) t.getValue()).longValue(), Long::sum));
          c.getJsonObject("errors", new JsonObject()).forEach(t -> s.errors.merge(t.getKey(), ((Number) t.getValue()).longValue(), Long::sum));
          s.rateLimited += c.getLong("rate_limited", 0L);
          s.queueRefused += c.getLong("queue_refused", 0L);
        });
      }
      return consumers(r, tokenById).map(consumerRows -> {
        Html h = new Html();
        h.el("p", "Over the last hour, on " + nodes.size() + (nodes.size() == 1 ? " gateway" : " gateways") + " (" + String.join(", ", nodes)
            + "); sessions are the cluster's.", "class", "lead");
        h.el("h2", "Callers").open("table", "class", "callers").open("thead").open("tr").el("th", "caller").el("th", "sessions")
            .el("th", "streams").el("th", "calls per tool").el("th", "errors per code").el("th", "rate-limited").el("th", "queue refusals")
            .close("tr").close("thead").open("tbody");
        callers.forEach((id, s) -> h.open("tr", "data-caller", s.name).el("td", s.name).el("td", s.sessions).el("td", s.streams)
            .el("td", counts(s.calls)).el("td", counts(s.errors)).el("td", s.rateLimited).el("td", s.queueRefused).close("tr"));
        h.close("tbody").close("table");
        h.el("h2", "Event consumers").open("table", "class", "consumers").open("thead").open("tr").el("th", "database").el("th", "owner")
            .el("th", "consumer").el("th", "tables").el("th", "lag").el("th", "leased").el("th", "pending").el("th", "redelivered")
            .el("th", "dead-lettered").close("tr").close("thead").open("tbody");
        consumerRows.forEach(h::add);
        return h.close("tbody").close("table");
      });
    });
  }

  private static Seen seen(Map<String, Seen> callers, Map<String, JsonObject> tokenById, String id, String name) {
    Seen s = callers.computeIfAbsent(id == null ? "?" : id, k -> new Seen());
    if (s.name == null) {
      JsonObject token = tokenById.get(id);
      s.name = token != null ? token.getString("name") : name != null ? name : id;
    }
    return s;
  }

  private static String counts(Map<String, Long> counts) {
    List<String> parts = new ArrayList<>();
    counts.forEach((k, v) -> parts.add(k + " " + v));
    return String.join(", ", parts);
  }

  /** Every consumer of every database, each with what events_status says of it to its owner. */
  private Future<List<Html>> consumers(Req r, Map<String, JsonObject> tokenById) {
    List<Future<List<Html>>> perDatabase = new ArrayList<>();
    for (String db : config.databaseNames()) {
      perDatabase.add(pools.get(db).query(CONSUMERS).execute().compose(rows -> {
        List<Future<Html>> each = new ArrayList<>();
        for (Row row : rows) {
          each.add(status(db, row, tokenById.get(row.getString("owner")), r.person().caller()));
        }
        return Future.all(each).map(all -> each.stream().map(Future::result).toList());
      }));
    }
    return Future.all(perDatabase).map(x -> {
      List<Html> out = new ArrayList<>();
      perDatabase.forEach(f -> out.addAll(f.result()));
      return out;
    });
  }

  /**
   * events_status of one consumer, asked as its owner: status finds a consumer by its owner's id
   * alone, and shows counters, never events.
   */
  private Future<Html> status(String db, Row row, JsonObject ownerToken, Caller viewer) {
    String owner = row.getString("owner");
    String ownerName = ownerToken != null ? ownerToken.getString("name") : owner;
    Caller asOwner = new Caller(owner, ownerName, ownerToken != null ? ownerToken.getString("pg_role") : viewer.pgRole(), Access.READ_ONLY,
        List.of("*"));
    ToolRequest request = new ToolRequest(UUID.randomUUID().toString(), db, ToolCatalog.EVENTS_STATUS,
        new JsonObject().put("consumer", row.getString("name")), asOwner);
    return ToolCalls.ask(vertx, Addresses.events(db), request, config.busSendTimeoutMs())
        .otherwise(err -> (ToolReply) null)
        .map(reply -> {
          Html h = new Html().open("tr", "data-consumer", row.getString("name")).el("td", db).el("td", ownerName).el("td", row.getString("name"))
              .el("td", row.getString("tables"));
          if (reply == null || reply.isError()) {
            h.open("td", "colspan", "5", "class", "note").text("status unavailable"
                + (reply == null ? ": no events service answered" : ": " + reply.error().getString("message"))).close("td");
          } else {
            JsonObject s = reply.structured();
            for (String field : new String[] {"lag", "leased", "pending", "redelivered", "dead_lettered"}) {
              h.el("td", s.getValue(field), "data-field", field);
            }
          }
          return h.close("tr");
        });
  }
}
