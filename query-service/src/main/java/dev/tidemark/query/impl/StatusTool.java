package dev.tidemark.query.impl;

import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ServiceHealth;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.schema.CaptureSetup;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.List;

/** {@code status}: who answered, for whom, and whether the parts the node depends on are reachable. */
public final class StatusTool implements ReadTool {

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;

  private final Pool admin;
  private final Pool changelog;

  /** The WAL the database's replication slot holds back (docs/changelog.md#when-the-slot-falls-behind). */
  static final String LAG = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint FROM pg_replication_slots"
      + " WHERE database = current_database() AND slot_name LIKE 'tidemark\\_%' AND confirmed_flush_lsn IS NOT NULL";

  /** Served tables the changelog cannot fully follow (docs/changelog.md#tables-the-login-does-not-own-and-tables-without-a-primary-key). */

  /**
   * @param admin Tidemark's login on the served database
   * @param changelog its login on the database the changelog is stored in, which holds the changelog's head
   */
  public StatusTool(Vertx vertx, NodeInfo node, TidemarkConfig config, Pool admin, Pool changelog) {
    this.admin = admin;
    this.changelog = changelog;
    this.vertx = vertx;
    this.node = node;
    this.config = config;
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    Future<String> role = CallerSessions.readOnly(db, request, config.database().statementTimeoutMs(),
        conn -> conn.query("SELECT current_user").execute().map(rows -> rows.iterator().next().getString(0)));
    Future<JsonObject> kafka = kafka();
    // the head is optional: a database whose changelog cannot be read still answers status
    Future<String> head = Future.succeededFuture(db.keys()).compose(k -> Changelog.headCursor(changelog, k.ring())).otherwise((String) null);
    Future<Long> lag = admin.query(LAG).execute()
        .map(rows -> rows.size() == 0 ? null : rows.iterator().next().getLong(0)).otherwise((Long) null);
    Future<io.vertx.core.json.JsonArray> problems = admin.query(CaptureSetup.PROBLEMS_SQL).execute().map(rows -> {
      io.vertx.core.json.JsonArray out = new io.vertx.core.json.JsonArray();
      rows.forEach(r -> out.add(new JsonObject().put("table", r.getString(0)).put("problem", r.getString(1))));
      return out;
    }).otherwise(new io.vertx.core.json.JsonArray());
    Future<JsonObject> images = admin.query(CaptureSetup.BEFORE_IMAGES_SQL).execute().map(rows -> {
      // only the exceptions: status stays short on a schema of hundreds of tables, all full by default
      JsonObject out = new JsonObject();
      rows.forEach(r -> {
        if (!"full".equals(r.getString("before_images"))) {
          out.put(r.getString("relation"), r.getString("before_images"));
        }
      });
      return out;
    }).otherwise(new JsonObject());
    Future<io.vertx.core.json.JsonArray> unplanned = admin.query(CaptureSetup.UNPLANNED_SQL).execute().map(rows -> {
      io.vertx.core.json.JsonArray out = new io.vertx.core.json.JsonArray();
      rows.forEach(r -> out.add(r.getString(0)));
      return out;
    }).otherwise(new io.vertx.core.json.JsonArray());
    Future<JsonObject> proposal = proposal(request);
    return Future.all(List.of(role, kafka, head, lag, problems, images, unplanned, proposal)).map(all -> {
      int size = node.clusterSize().getAsInt();
      JsonObject out = new JsonObject()
          .put("version", node.version())
          .put("node", node.nodeId())
          .put("database", request.database())
          .put("caller", new JsonObject()
              .put("name", request.caller().name())
              .put("role", role.result())
              .put("access", request.caller().access().wire()))
          .put("cluster", new JsonObject().put("reachable", size > 0).put("size", size))
          .put("kafka", kafka.result());
      if (head.result() != null) {
        out.put("changelog_head", head.result());
      }
      if (lag.result() != null) {
        out.put("changelog_lag_bytes", lag.result());
      }
      if (!problems.result().isEmpty()) {
        out.put("capture_problems", problems.result());
      }
      if (!images.result().isEmpty()) {
        out.put("before_images", images.result());
      }
      if (!unplanned.result().isEmpty()) {
        out.put("unplanned_tables", unplanned.result());
      }
      if (proposal.result() != null) {
        out.put("proposal", proposal.result());
      }
      dev.tidemark.contract.NamedCatalog named = dev.tidemark.runtime.NamedCatalogs.of(vertx).get(request.database());
      if (!named.faults().isEmpty()) {
        // an entry of this node's configuration is not served: an operator reads here which, and why
        out.put("named_tools", named.toJson());
      }
      // a host may show the model only the text: it says all the structured content does
      JsonObject k = kafka.result();
      String summary = "status: Tidemark " + node.version() + " on node " + node.nodeId()
          + ", database " + request.database() + ", you are " + request.caller().name()
          + " (" + role.result() + ", " + request.caller().access().wire() + "); cluster of " + size + ", Kafka "
          + (Boolean.TRUE.equals(k.getBoolean("reachable")) ? "reachable" : "unreachable")
          + (k.getString("detail") == null ? "" : " (" + k.getString("detail") + ")")
          + (head.result() == null ? "" : "; changelog_head " + head.result())
          + (lag.result() == null ? "" : ", capture " + lag.result() + " bytes behind")
          + keyOnly(images.result());
      JsonArray blocks = new JsonArray().add(problems.result())
          .add(proposal.result() == null ? new JsonArray() : new JsonArray().add(proposal.result()))
          .add(named.faults().isEmpty() ? new JsonArray() : new JsonArray().add(named.toJson()));
      return ToolReply.ok(summary, out, blocks);
    });
  }

  /** The tables whose changes keep less than the whole old row of updated and deleted rows, for the summary line. */
  private static String keyOnly(JsonObject images) {
    return lessThanFull(images, "key", "; before-images hold only the key on ")
        + lessThanFull(images, "index", "; before-images hold only the replica identity index's columns on ");
  }

  private static String lessThanFull(JsonObject images, String kind, String lead) {
    List<String> tables = images.fieldNames().stream().filter(t -> kind.equals(images.getString(t))).sorted().toList();
    return tables.isEmpty() ? "" : lead + String.join(", ", tables);
  }

  /** The caller's proposal the call names, null when it names none; NOT_FOUND when it is not one of the caller's. */
  private Future<JsonObject> proposal(ToolRequest request) {
    String id = request.arguments().getString("proposal");
    if (id == null) {
      return Future.succeededFuture();
    }
    return admin.preparedQuery(dev.tidemark.database.ProposalRows.SELECT + " WHERE p.id = $1 AND p.caller_id = $2")
        .execute(io.vertx.sqlclient.Tuple.of(id, request.caller().id())).map(rows -> {
          if (rows.size() == 0) {
            throw new dev.tidemark.contract.ToolException(dev.tidemark.contract.ErrorCode.NOT_FOUND, "None of your proposals has the id "
                + id + "; a change tool answers with its proposal_id when it proposes a change.",
                new JsonObject().put("argument", "proposal"));
          }
          return dev.tidemark.database.ProposalRows.forProposer(dev.tidemark.database.ProposalRows.json(rows.iterator().next()));
        });
  }

  /** Kafka is the changelog role's dependency: ask whichever node runs it. */
  private Future<JsonObject> kafka() {
    DeliveryOptions opts = new DeliveryOptions()
        .addHeader(Addresses.ACTION_HEADER, Actions.HEALTH)
        .setSendTimeout(Math.min(config.kafka().requestTimeoutMs(), config.busSendTimeoutMs()));
    return vertx.eventBus().<JsonObject>request(Addresses.changelog(config.database().name()), new JsonObject(), opts)
        .map(msg -> ServiceHealth.fromJson(msg.body()))
        .map(h -> {
          JsonObject k = new JsonObject().put("reachable", h.up());
          return h.detail() == null ? k : k.put("detail", h.detail());
        })
        .otherwise(err -> new JsonObject().put("reachable", false).put("detail", "no changelog node answered"));
  }
}
