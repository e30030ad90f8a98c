package dev.tidemark.console.impl;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.Digests;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.database.KeyRingSource;
import dev.tidemark.keys.ChangeCursor;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The audit trail: committed transactions, newest first, filtered by caller, table, tool, time and
 * transaction, each with its changes' before and after images as the viewer's own role may see them,
 * its idempotency key and plan id; and, from a transaction, the undo an agent would get
 * ({@code undo_transaction}: its plan, then the person's confirmation).
 *
 * <p>Which transactions match is read as Tidemark's login from the changelog's own tables (times,
 * attribution, the tables touched); what each changed is read with {@code changes_since} as the
 * viewer, from the transaction's position: a transaction none of whose changes the viewer may read
 * is not shown.
 */
final class AuditPage {

  static final int PAGE = 20;
  /** Most changes shown of one transaction. */
  static final int MAX_CHANGES = 1000;

  private static final String MATCHING = """
      SELECT k.position, k.xid::text AS xid, k.committed_at, at.caller, at.tool, at.idempotency_key, at.plan_id,
             (SELECT count(*) FROM tidemark.changelog c WHERE c.xid = k.xid AND c.op <> 'DDL') AS changes
        FROM tidemark.changelog_commit k
        LEFT JOIN tidemark.change_attribution at ON at.xid = k.xid
       WHERE ($1::bigint IS NULL OR k.position < $1)
         AND ($2::timestamptz IS NULL OR k.committed_at >= $2)
         AND ($3::timestamptz IS NULL OR k.committed_at < $3)
         AND ($4::text IS NULL OR k.xid::text = $4)
         AND ($5::text IS NULL OR at.caller = $5)
         AND ($6::text IS NULL OR at.tool = $6)
         AND EXISTS (SELECT 1 FROM tidemark.changelog c WHERE c.xid = k.xid AND c.op <> 'DDL' AND c.schema_name = ANY($7)
                      AND ($8::text IS NULL OR c.schema_name || '.' || c.table_name = $8 OR c.table_name = $8))
       ORDER BY k.position DESC
       LIMIT $9""";

  private final TidemarkConfig config;
  private final Map<String, Pool> pools;
  private final Map<String, KeyRingSource> keys;
  private final PersonTools tools;
  private final Forms forms;
  private final String path;

  /** @param pools Tidemark's login on each database's changelog (database.changelog-url, or the served database) */
  AuditPage(TidemarkConfig config, Map<String, Pool> pools, Map<String, KeyRingSource> keys, PersonTools tools, Forms forms) {
    this.config = config;
    this.pools = pools;
    this.keys = keys;
    this.tools = tools;
    this.forms = forms;
    this.path = config.console().path();
  }

  /** The filters of a request, checked. */
  record Filter(String caller, String table, String tool, String from, String to, String transaction, Long before) {

    static Filter of(Req r) {
      String tool = r.param("tool", 64);
      if (tool != null && ToolCatalog.find(tool).isEmpty()) {
        throw Refusal.badInput("There is no tool named " + tool + "; pick one from the list.");
      }
      String transaction = r.param("transaction", 20);
      if (transaction != null && !transaction.matches("[0-9]{1,20}")) {
        throw Refusal.badInput("A transaction is a number, as the audit trail and changes_since show it.");
      }
      String before = r.param("before", 20);
      if (before != null && !before.matches("[0-9]{1,19}")) {
        throw Refusal.badInput("The page link was altered: 'before' is a position number. Open the audit trail again.");
      }
      return new Filter(r.param("caller", 200), r.param("table", 200), tool, r.param("from", 40), r.param("to", 40), transaction,
          before == null ? null : Long.parseLong(before));
    }

    /** The filters as a query string, for the next page's link. */
    String query(String database) {
      Map<String, String> q = new LinkedHashMap<>();
      q.put("database", database);
      q.put("caller", caller);
      q.put("table", table);
      q.put("tool", tool);
      q.put("from", from);
      q.put("to", to);
      q.put("transaction", transaction);
      List<String> parts = new ArrayList<>();
      q.forEach((k, v) -> {
        if (v != null) {
          parts.add(k + "=" + URLEncoder.encode(v, StandardCharsets.UTF_8));
        }
      });
      return String.join("&", parts);
    }
  }

  /** A time from the filter form: a date-time input's value (taken as UTC), or an ISO-8601 instant or offset time. */
  static OffsetDateTime time(String value, String field) {
    if (value == null) {
      return null;
    }
    try {
      return OffsetDateTime.parse(value);
    } catch (DateTimeParseException e) {
      try {
        return LocalDateTime.parse(value).atOffset(ZoneOffset.UTC);
      } catch (DateTimeParseException e2) {
        throw Refusal.badInput("The field " + field + " takes a time such as 2026-12-04T09:30 (UTC) or 2026-12-04T09:30:00+01:00.");
      }
    }
  }

  Future<Html> list(Req r) {
    Filter f = Filter.of(r);
    OffsetDateTime from = time(f.from(), "from");
    OffsetDateTime to = time(f.to(), "to");
    tools.check(r.person().caller(), r.database(), ToolCatalog.CHANGES_SINCE);
    String[] schemas = config.forDatabase(r.database()).database().schemas().stream().filter(s -> !s.equals("tidemark")).toArray(String[]::new);
    Tuple args = Tuple.from(Arrays.asList(f.before(), from, to, f.transaction(), f.caller(), f.tool(), schemas, f.table(), PAGE));
    return pools.get(r.database()).preparedQuery(MATCHING).execute(args).compose(rows -> {
      List<Row> matched = new ArrayList<>();
      rows.forEach(matched::add);
      KeyRing ring = keys.get(r.database()).ring();
      List<Future<JsonArray>> changes = matched.stream().map(row -> changesOf(r, row, f, ring)).toList();
      return Future.join(changes).transform(x -> {
        Html h = new Html();
        filterForm(h, r, f);
        int shown = 0;
        for (int i = 0; i < matched.size(); i++) {
          Future<JsonArray> c = changes.get(i);
          if (c.failed()) {
            h.open("section", "class", "transaction error").el("p", c.cause().getMessage(), "class", "message").close("section");
          } else if (!c.result().isEmpty()) {
            transaction(h, r, matched.get(i), c.result());
            shown++;
          }
        }
        if (shown == 0) {
          h.el("p", "No committed change matches, among those your role (" + r.person().caller().pgRole() + ") may read.", "class", "lead");
        }
        if (matched.size() == PAGE) {
          h.open("p").el("a", "Older transactions", "href", path + "/audit?" + f.query(r.database()) + "&before="
              + matched.get(matched.size() - 1).getLong("position"), "class", "older").close("p");
        }
        return Future.succeededFuture(h);
      });
    });
  }

  /** What {@code changes_since}, as the viewer, shows of one transaction. */
  private Future<JsonArray> changesOf(Req r, Row row, Filter f, KeyRing ring) {
    JsonObject args = new JsonObject().put("cursor", ChangeCursor.encode(new ChangePosition(row.getLong("position"), 0), ring))
        .put("limit", (int) Math.min(MAX_CHANGES, row.getLong("changes") + 1));
    if (f.table() != null) {
      args.put("tables", new JsonArray().add(f.table()));
    }
    String xid = row.getString("xid");
    return tools.call(r.person().caller(), r.database(), ToolCatalog.CHANGES_SINCE, args).compose(reply -> {
      if (reply.isError()) {
        if (ErrorCode.CURSOR_EXPIRED.code().equals(reply.error().getString("code"))) {
          return Future.succeededFuture(new JsonArray());  // pruned while the page was read
        }
        return Future.failedFuture(new IllegalStateException("Transaction " + xid + ": " + reply.error().getString("code") + ": "
            + reply.error().getString("message")));
      }
      JsonArray mine = new JsonArray();
      reply.structured().getJsonArray("changes", new JsonArray()).forEach(c -> {
        if (xid.equals(((JsonObject) c).getString("transaction"))) {
          mine.add(c);
        }
      });
      return Future.succeededFuture(mine);
    });
  }

  private void filterForm(Html h, Req r, Filter f) {
    h.open("form", "method", "get", "action", path + "/audit", "class", "filter")
        .empty("input", "type", "hidden", "name", "database", "value", r.database());
    input(h, "caller", "Caller", f.caller(), "text");
    input(h, "table", "Table", f.table(), "text");
    h.open("label").text("Tool ").open("select", "name", "tool").el("option", "any", "value", "");
    for (String name : ToolCatalog.all().stream().map(dev.tidemark.contract.ToolDescriptor::name).toList()) {
      h.el("option", name, "value", name, "selected", name.equals(f.tool()) ? "selected" : null);
    }
    h.close("select").close("label");
    input(h, "from", "From (UTC)", f.from(), "datetime-local");
    input(h, "to", "To (UTC)", f.to(), "datetime-local");
    input(h, "transaction", "Transaction", f.transaction(), "text");
    h.el("button", "Filter", "type", "submit").close("form");
  }

  private static void input(Html h, String name, String label, String value, String type) {
    h.open("label").text(label + " ").empty("input", "type", type, "name", name, "value", value).close("label");
  }

  private void transaction(Html h, Req r, Row row, JsonArray changes) {
    String xid = row.getString("xid");
    h.open("section", "class", "transaction", "data-transaction", xid);
    h.el("h2", "Transaction " + xid);
    h.open("dl", "class", "facts");
    fact(h, "committed at", row.getOffsetDateTime("committed_at").toString());
    fact(h, "caller", row.getString("caller") == null ? "(not through Tidemark)" : row.getString("caller"));
    fact(h, "tool", row.getString("tool") == null ? "" : row.getString("tool"));
    fact(h, "idempotency key", row.getString("idempotency_key") == null ? "" : row.getString("idempotency_key"));
    fact(h, "plan id", row.getString("plan_id") == null ? "" : row.getString("plan_id"));
    h.close("dl");
    h.open("p").el("a", "Plan an undo of this transaction", "href", path + "/audit/undo?database=" + r.database() + "&transaction=" + xid,
        "class", "undo").close("p");
    changes.forEach(c -> h.add(RowView.of((JsonObject) c)));
    h.close("section");
  }

  private static void fact(Html h, String name, String value) {
    h.el("dt", name).el("dd", value, "data-fact", name);
  }

  /** The undo's plan, as undo_transaction gives it to an agent, with the form that confirms it. */
  Future<Html> planUndo(Req r) {
    String xid = r.param("transaction", 20);
    if (xid == null || !xid.matches("[0-9]+")) {
      throw Refusal.badInput("Name the transaction to undo, a number as the audit trail shows it.");
    }
    boolean overwrite = "true".equals(r.param("overwrite"));
    JsonObject args = new JsonObject().put("transaction", xid);
    if (overwrite) {
      args.put("overwrite", true);
    }
    return tools.call(r.person().caller(), r.database(), ToolCatalog.UNDO_TRANSACTION, args).map(reply -> {
      JsonObject plan = result(reply, "planned");
      Html h = new Html().open("section", "class", "undo-plan", "data-transaction", xid);
      h.el("p", reply.summary(), "class", "lead");
      outcome(h, plan);
      JsonArray later = plan.getJsonArray("changed_since", new JsonArray());
      if (!later.isEmpty()) {
        h.el("h3", "Rows changed again since").el("p", "Undoing would overwrite these later changes.", "class", "note");
        later.forEach(c -> h.el("pre", ((JsonObject) c).encodePrettily(), "class", "changed-since"));
      }
      if (later.isEmpty() || overwrite) {
        if (Boolean.TRUE.equals(plan.getBoolean("confirmation_required"))) {
          h.el("p", "This undo removes rows. Confirming it is your consent to that.", "class", "note warning");
        }
        String planId = plan.getString("plan_id");
        h.open("form", "method", "post", "action", path + "/audit/undo?database=" + r.database(), "class", "confirm-undo")
            .empty("input", "type", "hidden", "name", Forms.FIELD, "value", forms.token(r.person(), "undo", undoTarget(r.database(), xid, overwrite, planId)))
            .empty("input", "type", "hidden", "name", "transaction", "value", xid)
            .empty("input", "type", "hidden", "name", "overwrite", "value", String.valueOf(overwrite))
            .empty("input", "type", "hidden", "name", "plan_id", "value", planId)
            .el("button", "Confirm the undo", "type", "submit")
            .close("form");
      } else {
        h.open("p").el("a", "Plan again, over the later changes", "href", path + "/audit/undo?database=" + r.database() + "&transaction="
            + xid + "&overwrite=true", "class", "overwrite").close("p");
      }
      return h.close("section");
    });
  }

  static String undoTarget(String database, String xid, boolean overwrite, String planId) {
    return database + "|" + xid + "|" + overwrite + "|" + Digests.sha256Hex(planId == null ? "" : planId);
  }

  /** The form's target: the plan the person saw and confirmed, nothing else. */
  String confirmTarget(Req r) {
    return undoTarget(r.database(), String.valueOf(r.param("transaction", 20)), "true".equals(r.param("overwrite")), r.param("plan_id", 8192));
  }

  /** Commits the confirmed plan, as the person, with the form's nonce as the idempotency key. */
  Future<Html> commitUndo(Req r, String nonce) {
    String xid = r.param("transaction", 20);
    JsonObject args = new JsonObject().put("transaction", xid).put("plan_id", r.param("plan_id", 8192))
        .put("idempotency_key", "console-undo-" + nonce).put("confirm", true);
    if ("true".equals(r.param("overwrite"))) {
      args.put("overwrite", true);
    }
    return tools.call(r.person().caller(), r.database(), ToolCatalog.UNDO_TRANSACTION, args).map(reply -> {
      JsonObject done = result(reply, "undone");
      Html h = new Html().open("section", "class", "undo-done", "data-transaction", xid, "data-mode", done.getString("mode"));
      h.el("p", reply.summary(), "class", "lead");
      outcome(h, done);
      h.open("p").el("a", "Back to the audit trail", "href", path + "/audit?database=" + r.database()).close("p");
      return h.close("section");
    });
  }

  /** A change tool's result, or its error as a page. */
  private static JsonObject result(ToolReply reply, String what) {
    if (reply.isError()) {
      ErrorCode code = ErrorCode.of(reply.error().getString("code")).orElse(ErrorCode.INTERNAL);
      throw new Refusal(code == ErrorCode.PERMISSION_DENIED ? 403 : 409, code, "Not " + what, reply.error().getString("message"));
    }
    return reply.structured();
  }

  private static void outcome(Html h, JsonObject result) {
    h.open("table", "class", "totals").open("thead").open("tr").el("th", "table").el("th", "inserted").el("th", "updated")
        .el("th", "deleted").close("tr").close("thead").open("tbody");
    result.getJsonArray("changes", new JsonArray()).forEach(o -> {
      JsonObject c = (JsonObject) o;
      h.open("tr", "data-table", c.getString("table")).el("td", c.getString("table")).el("td", c.getValue("inserted"))
          .el("td", c.getValue("updated")).el("td", c.getValue("deleted")).close("tr");
    });
    h.close("tbody").close("table");
    JsonArray samples = result.getJsonArray("samples", new JsonArray());
    if (!samples.isEmpty()) {
      h.el("h3", "Sample rows");
      samples.forEach(s -> {
        if (s instanceof JsonObject o) {
          h.add(RowView.of(o));
        }
      });
    }
  }
}
