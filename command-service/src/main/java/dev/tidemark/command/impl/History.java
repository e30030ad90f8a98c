package dev.tidemark.command.impl;

import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the changelog holds of the rows a restore puts back, read as Tidemark's login (callers
 * have no rights on schema tidemark). It reads only what the caller named: one row's changes from
 * a position on, or one transaction's changes. The caller's right to the tables is checked by
 * {@link Restorer}, as the caller, before anything is shown or written.
 */
final class History {

  /** The most row changes one undo_transaction puts back: its statement carries every row. */
  static final int MAX_ROWS = 10_000;

  /** A change of a row as the changelog holds it. */
  record Change(long position, long id, String xid, String op, JsonArray key, JsonObject before, JsonObject after, String committedAt,
      String caller, boolean partial) {

    static Change of(JsonObject c) {
      Object key = c.getValue("key");
      return new Change(c.getLong("position", 0L), c.getLong("id"), c.getString("xid"), c.getString("op"),
          key instanceof JsonArray a ? a : null, c.getJsonObject("before"), c.getJsonObject("after"), c.getString("committed_at"),
          c.getString("caller"), Boolean.TRUE.equals(c.getBoolean("partial")));
    }

    /** What changed_since shows of a later change. */
    JsonObject toJson() {
      JsonObject out = new JsonObject().put("op", op).put("transaction", xid);
      if (committedAt != null) {
        out.put("committed_at", committedAt);
      }
      if (caller != null) {
        out.put("caller", caller);
      }
      return out;
    }
  }

  /**
   * One row to put back: the table (its oid), the row as it is to be ({@code desired}, null for a
   * row that is to be absent), the row as the changelog last recorded it ({@code expected}, null
   * when its last recorded change removed it), its key there, and the changes recorded after the
   * one being undone.
   */
  record RowRestore(long relid, JsonArray key, JsonObject desired, JsonObject expected, List<Change> later) {}

  /**
   * Whether change {@code c} of a table {@code t} (its changelog_relation row) updated or deleted a
   * row while the table recorded only the key of its old rows (database.key-only-tables): no
   * before-image, or one of key columns alone where the table has others.
   */
  private static final String PARTIAL = """
      c.op IN ('UPDATE', 'DELETE') AND (c.before IS NULL
        OR NOT EXISTS (SELECT 1 FROM jsonb_object_keys(c.before) b(col) WHERE b.col <> ALL (t.key_columns))
           AND coalesce(t.other_columns, false))""";

  /** The position and commit time a change is found at is kept with it; changes of one table share its key columns. */
  private static final String ROW_SQL = """
      SELECT s.pruned_commit, s.pruned_change, t.key_columns,
             (SELECT json_agg(json_build_object('position', k.position, 'id', c.id, 'xid', c.xid::text, 'op', c.op, 'key', c.key,
                       'before', c.before, 'after', c.after, 'committed_at', k.committed_at,
                       'caller', coalesce(a.caller, c.caller), 'partial', """ + PARTIAL + """
      ) ORDER BY k.position, c.id)
                FROM tidemark.changelog c
                JOIN tidemark.changelog_commit k ON k.xid = c.xid
                LEFT JOIN tidemark.change_attribution a ON a.xid = c.xid
               WHERE c.relid = $1::int8::oid AND (k.position > $2 OR k.position = $2 AND c.id >= $3)
                 AND (c.op = 'TRUNCATE' OR c.key = $4::jsonb
                      OR (SELECT jsonb_agg(c.before -> u.col ORDER BY u.n) FROM unnest(t.key_columns) WITH ORDINALITY u(col, n)) = $4::jsonb))
               AS changes
        FROM tidemark.changelog_state s
        LEFT JOIN tidemark.changelog_relation t ON t.relid = $1::int8::oid""";

  private static final String TRANSACTION_SQL = """
      WITH n AS (SELECT count(*) AS rows FROM (SELECT 1 FROM tidemark.changelog c WHERE c.xid = $1::text::xid8 LIMIT $2) x)
      SELECT s.pruned_commit, k.position, k.committed_at, n.rows,
             CASE WHEN n.rows < $2 THEN
               (SELECT json_agg(json_build_object('position', k.position, 'id', c.id, 'xid', c.xid::text, 'relid', c.relid::int8,
                         'op', c.op, 'key', c.key, 'before', c.before, 'after', c.after,
                         'table', format('%I.%I', c.schema_name, c.table_name), 'partial', """ + PARTIAL + """
      ,
                         'before_key', (SELECT jsonb_agg(c.before -> u.col ORDER BY u.n)
                                          FROM unnest(t.key_columns) WITH ORDINALITY u(col, n))) ORDER BY c.id)
                  FROM tidemark.changelog c LEFT JOIN tidemark.changelog_relation t ON t.relid = c.relid
                 WHERE c.xid = $1::text::xid8) END AS changes,
             (SELECT max(x.xid) FROM tidemark.changelog_commit x) >= $1::text::xid8 AS recorded_later,
             (SELECT min(x.xid) FROM tidemark.changelog_commit x) > $1::text::xid8 AS before_kept,
             (SELECT array_agg(DISTINCT c.relid::int8) FROM tidemark.changelog c WHERE c.xid = $1::text::xid8 AND c.relid IS NOT NULL)
               AS relids
        FROM tidemark.changelog_state s CROSS JOIN n
        LEFT JOIN tidemark.changelog_commit k ON k.xid = $1::text::xid8""";

  /** Changes after {@code $1} to the rows ({@code relid}, {@code key}) of {@code $2}, and truncations of their tables. */
  private static final String LATER_SQL = """
      SELECT json_agg(json_build_object('position', k.position, 'id', c.id, 'xid', c.xid::text, 'relid', c.relid::int8, 'op', c.op,
               'key', c.key, 'committed_at', k.committed_at, 'caller', coalesce(a.caller, c.caller)) ORDER BY k.position, c.id)
        FROM tidemark.changelog c
        JOIN tidemark.changelog_commit k ON k.xid = c.xid
        LEFT JOIN tidemark.change_attribution a ON a.xid = c.xid
       WHERE k.position > $1 AND c.op <> 'DDL'
         AND EXISTS (SELECT 1 FROM jsonb_to_recordset($2::jsonb) w(relid int8, key jsonb)
                      WHERE w.relid = c.relid AND (c.op = 'TRUNCATE' OR w.key = c.key))""";

  /** What became of a transaction the changelog does not hold, as the served database knows it. */
  private static final String STATUS_SQL = "SELECT pg_xact_status($1::text::xid8) AS status";

  private final Pool pool;
  private final Pool store;

  /**
   * @param pool Tidemark's login on the served database
   * @param store its login on the database the changelog is stored in ({@code pool} itself unless database.changelog-url is set)
   */
  History(Pool pool, Pool store) {
    this.pool = pool;
    this.store = store;
  }

  /**
   * The row of table {@code relid} with key {@code key} (as the changelog writes keys) as it was
   * just before {@code before}: the row its first change at or after that position found. The
   * changes of later transactions are its later changes.
   */
  Future<RowRestore> row(long relid, String table, JsonArray key, ChangePosition before) {
    return store.preparedQuery(ROW_SQL).execute(Tuple.of(relid, before.commit(), before.change(), key)).map(rows -> {
      Row r = rows.iterator().next();
      if (r.getValue("key_columns") == null) {
        throw notCaptured(table);
      }
      if (before.compareTo(new ChangePosition(r.getLong("pruned_commit"), r.getLong("pruned_change"))) < 0) {
        throw expired("before", "The position is older than the changes Tidemark keeps, so the row as it was then is not known any more.");
      }
      List<Change> changes = new ArrayList<>();
      if (r.getValue("changes") instanceof JsonArray a) {
        a.forEach(o -> changes.add(Change.of((JsonObject) o)));
      }
      Change first = changes.stream().filter(c -> !"TRUNCATE".equals(c.op())).findFirst().orElseThrow(() -> new ToolException(
          ErrorCode.NOT_FOUND, "The changelog holds no change of that row of " + table + " at or after that position: the row is as it"
              + " was then, or the key or the position is not the one you meant (changes_since shows both). Nothing was written.",
          new JsonObject().put("argument", "key")));
      if (first.partial()) {
        throw beforeImageMissing(table, "restore_rows");
      }
      JsonObject last = first.before();
      List<Change> later = new ArrayList<>();
      for (Change c : changes) {
        if (c.position() < first.position() || c.position() == first.position() && c.id() < first.id()) {
          continue;  // a truncation before the row's change
        }
        if (!c.xid().equals(first.xid())) {
          later.add(c);
        }
        last = "DELETE".equals(c.op()) || "TRUNCATE".equals(c.op()) ? null : c.after();
      }
      return new RowRestore(relid, key, "INSERT".equals(first.op()) ? null : first.before(), last, later);
    });
  }

  /**
   * One transaction as the changelog holds it: the tables it changed (which the caller's right to is
   * checked on before anything else is said of it), and then either its rows to put back or why it
   * cannot be undone.
   */
  record Transaction(java.util.Set<Long> relids, ToolException refusal, List<RowRestore> rows) {}

  /**
   * Every row transaction {@code xid} changed, as it was before the transaction, in the order the
   * transaction first touched them; with the changes recorded after it.
   */
  Future<Transaction> transaction(String xid) {
    return store.preparedQuery(TRANSACTION_SQL).execute(Tuple.of(xid, MAX_ROWS + 1)).compose(rows -> {
      Row r = rows.iterator().next();
      if (r.getLong("position") == null) {
        return pool.preparedQuery(STATUS_SQL).execute(Tuple.of(xid)).compose(status ->
            Future.failedFuture(notRecorded(xid, r.getLong("pruned_commit"), status.iterator().next().getString("status"),
                Boolean.TRUE.equals(r.getBoolean("recorded_later")), Boolean.TRUE.equals(r.getBoolean("before_kept")))));
      }
      java.util.Set<Long> tables = new java.util.TreeSet<>();
      if (r.getValue("relids") != null) {
        for (Long relid : r.getArrayOfLongs("relids")) {
          tables.add(relid);
        }
      }
      if (r.getLong("rows") > MAX_ROWS) {
        return Future.succeededFuture(new Transaction(tables, new ToolException(ErrorCode.LIMIT_EXCEEDED, "Transaction " + xid
            + " changed more than " + MAX_ROWS + " rows; undo_transaction puts back at most " + MAX_ROWS + ". Restore the rows you need"
            + " with restore_rows. Nothing was written.", new JsonObject().put("argument", "transaction").put("limit", MAX_ROWS)), null));
      }
      long position = r.getLong("position");
      // one entry per row: a row the transaction changed several times (or deleted and inserted again) is put back once
      Map<String, JsonObject[]> chains = new LinkedHashMap<>();
      Map<String, Long> relids = new LinkedHashMap<>();
      for (Object o : (JsonArray) r.getValue("changes")) {
        Change c = Change.of((JsonObject) o);
        if ("TRUNCATE".equals(c.op()) || "DDL".equals(c.op())) {
          return Future.succeededFuture(new Transaction(tables, new ToolException(ErrorCode.INVALID_ARGUMENTS, "Transaction " + xid
              + ("DDL".equals(c.op()) ? " changed the schema" : " truncated a table") + ", which the changelog holds no rows of, so it"
              + " cannot be undone from it. Nothing was written.", new JsonObject().put("argument", "transaction").put("op", c.op())),
              null));
        }
        long relid = ((JsonObject) o).getLong("relid");
        // an update that changed its key came from the key of its before-image; an insert may follow a delete of its key
        Object beforeKey = ((JsonObject) o).getValue("before_key");
        String from = rowId(relid, c.before() != null && beforeKey instanceof JsonArray k ? k : c.key());
        String to = rowId(relid, c.key());
        JsonObject[] chain = chains.remove(from);
        if (chain == null) {
          if (c.partial()) {
            return Future.succeededFuture(new Transaction(tables, beforeImageMissing(((JsonObject) o).getString("table"),
                "undo_transaction"), null));
          }
          chain = new JsonObject[] {"INSERT".equals(c.op()) ? null : c.before(), null};
        }
        chain[1] = "DELETE".equals(c.op()) ? null : c.after();
        chains.put(to, chain);
        relids.put(to, relid);
      }
      List<String> order = new ArrayList<>(chains.keySet());
      JsonArray wanted = new JsonArray();
      for (String k : order) {
        wanted.add(new JsonObject().put("relid", relids.get(k)).put("key", keyOfRowId(k)));
      }
      return store.preparedQuery(LATER_SQL).execute(Tuple.of(position, wanted)).map(later -> {
        Map<String, List<Change>> laterByRow = new LinkedHashMap<>();
        if (later.iterator().next().getValue(0) instanceof JsonArray a) {
          for (Object o : a) {
            JsonObject c = (JsonObject) o;
            Change change = Change.of(c);
            long relid = c.getLong("relid");
            for (String k : order) {
              if (relids.get(k) == relid && ("TRUNCATE".equals(change.op()) || k.equals(rowId(relid, change.key())))) {
                laterByRow.computeIfAbsent(k, x -> new ArrayList<>()).add(change);
              }
            }
          }
        }
        List<RowRestore> out = new ArrayList<>();
        for (String k : order) {
          JsonObject[] chain = chains.get(k);
          if (chain[0] == null && chain[1] == null) {
            continue;  // inserted and deleted again by the transaction: nothing to put back
          }
          out.add(new RowRestore(relids.get(k), keyOfRowId(k), chain[0], chain[1],
              laterByRow.getOrDefault(k, List.of())));
        }
        return new Transaction(tables, null, out);
      });
    });
  }

  /** A row's identity within one undo: its table and its key as the changelog writes keys. */
  private static String rowId(long relid, JsonArray key) {
    return relid + ":" + (key == null ? "[]" : key.encode());
  }

  private static JsonArray keyOfRowId(String rowId) {
    return new JsonArray(rowId.substring(rowId.indexOf(':') + 1));
  }

  private static ToolException beforeImageMissing(String table, String tool) {
    return new ToolException(ErrorCode.BEFORE_IMAGE_MISSING, "The changelog holds only the key of the row of " + table + " that this"
        + " change updated or deleted, not the row as it was, because the table was named in database.key-only-tables when it"
        + " changed (REPLICA IDENTITY DEFAULT): " + tool + " cannot put it back. Nothing was written. Restore the row by hand if you"
        + " know it; an operator who wants later changes of " + table + " to be restorable removes it from database.key-only-tables.",
        new JsonObject().put("table", table));
  }

  private static ToolException notRecorded(String xid, long prunedCommit, String status, boolean recordedLater, boolean beforeKept) {
    if (prunedCommit > 0 && (status == null || "committed".equals(status) && beforeKept)) {
      return expired("transaction", "Transaction " + xid + " is older than the changes Tidemark keeps.");
    }
    String why = switch (status == null ? "" : status) {
      case "aborted" -> "it was rolled back";
      case "in progress" -> "it has not committed";
      case "committed" -> recordedLater ? "it changed no table Tidemark serves, or its changes were removed with the changelog's"
          + " retention" : "it changed no table Tidemark serves, or it committed moments ago and is not recorded yet (call again in a"
          + " second if so)";
      default -> "no such transaction is known";
    };
    return new ToolException(ErrorCode.NOT_FOUND, "The changelog holds no change of transaction " + xid + ": " + why
        + ". Take the transaction from a change that changes_since shows. Nothing was written.",
        new JsonObject().put("argument", "transaction"));
  }

  private static ToolException expired(String argument, String what) {
    return new ToolException(ErrorCode.CURSOR_EXPIRED, what + " Restore only from changes that changes_since still shows."
        + " Nothing was written.", new JsonObject().put("argument", argument));
  }

  static ToolException notCaptured(String table) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, "The changes of " + table + " are not captured (its schema is not in"
        + " database.schemas, or the changelog role has not reached it yet), so the changelog holds no earlier row to restore."
        + " Nothing was written.", new JsonObject().put("argument", "table").put("reason", "not_captured"));
  }
}
