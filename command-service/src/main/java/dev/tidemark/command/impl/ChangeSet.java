package dev.tidemark.command.impl;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a transaction did, read from {@code tidemark.changes_of_current_transaction()}: every row
 * the capture triggers saw, so cascades and trigger effects count as much as the statement itself.
 */
public final class ChangeSet {

  /** Before/after images shown per table and operation. */
  public static final int SAMPLES_PER_TABLE_AND_OP = 3;

  /**
   * One captured change. {@code readable} are the columns the caller's role may SELECT, and
   * {@code rowSecurity} whether row-level security applies to it on the table: the images are
   * whole, for the plan's fingerprint, but shown only as far as the caller may see them.
   */
  public record Change(String table, String op, Object key, JsonObject before, JsonObject after, java.util.Set<String> readable,
                       boolean rowSecurity) {

    public Change(String table, String op, Object key, JsonObject before, JsonObject after) {
      this(table, op, key, before, after, null, false);
    }

    /** The image with only the columns the caller may read; null when row-level security hides the table's images. */
    JsonObject shown(JsonObject image) {
      if (image == null || rowSecurity) {
        return null;
      }
      if (readable == null) {
        return image;
      }
      JsonObject out = new JsonObject();
      image.forEach(e -> {
        if (readable.contains(e.getKey())) {
          out.put(e.getKey(), e.getValue());
        }
      });
      return out;
    }

    /** Whether the caller may see the whole image, and so the key taken from it. */
    boolean wholeShown() {
      JsonObject image = before != null ? before : after;
      return !rowSecurity && (readable == null || image == null || readable.containsAll(image.fieldNames()));
    }
  }

  /** $1 is the server's MAC over the transaction id: see tidemark.changes_of_current_transaction. */
  public static final String SQL = "SELECT schema_name, table_name, op, key, before, after, readable_columns, row_security"
      + " FROM tidemark.changes_of_current_transaction($1)";

  private final List<Change> changes;

  public ChangeSet(List<Change> changes) {
    this.changes = List.copyOf(changes);
  }

  public static ChangeSet of(RowSet<Row> rows) {
    List<Change> changes = new ArrayList<>();
    for (Row r : rows) {
      String op = r.getString("op");
      if ("DDL".equals(op)) {
        continue;
      }
      String[] readable = r.getArrayOfStrings("readable_columns");
      changes.add(new Change(r.getString("schema_name") + "." + r.getString("table_name"), op, r.getValue("key"),
          (JsonObject) r.getValue("before"), (JsonObject) r.getValue("after"),
          readable == null ? java.util.Set.of() : java.util.Set.of(readable), Boolean.TRUE.equals(r.getBoolean("row_security"))));
    }
    return new ChangeSet(changes);
  }

  public boolean isEmpty() {
    return changes.isEmpty();
  }

  /** True when the change deletes or truncates rows of any table. */
  public boolean removes() {
    return changes.stream().anyMatch(c -> c.op().equals("DELETE") || c.op().equals("TRUNCATE"));
  }

  /**
   * A fingerprint of the state the change depends on: for each updated or deleted row its table,
   * operation, key and before-image; for inserts and truncations only the table and operation (an
   * inserted row has no before-image, and its generated key differs from run to run). Sorted, so
   * the order rows were visited in does not matter. Any concurrent write to a touched row, a new
   * row the change would also touch, or a row it would no longer touch changes the fingerprint; a
   * write to any other row does not.
   */
  public String fingerprint() {
    List<String> entries = new ArrayList<>();
    for (Change c : changes) {
      entries.add(switch (c.op()) {
        case "UPDATE", "DELETE" -> c.table() + "\u0000" + c.op() + "\u0000" + Canonical.json(c.key()) + "\u0000" + Canonical.json(c.before());
        default -> c.table() + "\u0000" + c.op();
      });
    }
    Collections.sort(entries);
    return Canonical.hash(String.join("\n", entries));
  }

  /** Rows inserted, updated and deleted per table, in the order tables were first touched. */
  public JsonArray perTable() {
    Map<String, JsonObject> tables = new LinkedHashMap<>();
    for (Change c : changes) {
      JsonObject t = tables.computeIfAbsent(c.table(),
          name -> new JsonObject().put("table", name).put("inserted", 0).put("updated", 0).put("deleted", 0));
      switch (c.op()) {
        case "INSERT" -> t.put("inserted", t.getInteger("inserted") + 1);
        case "UPDATE" -> t.put("updated", t.getInteger("updated") + 1);
        case "DELETE" -> t.put("deleted", t.getInteger("deleted") + 1);
        case "TRUNCATE" -> t.put("truncated", true);
        default -> { }
      }
    }
    return new JsonArray(new ArrayList<>(tables.values()));
  }

  public JsonObject totals() {
    int inserted = 0;
    int updated = 0;
    int deleted = 0;
    for (Change c : changes) {
      switch (c.op()) {
        case "INSERT" -> inserted++;
        case "UPDATE" -> updated++;
        case "DELETE" -> deleted++;
        default -> { }
      }
    }
    return new JsonObject().put("inserted", inserted).put("updated", updated).put("deleted", deleted);
  }

  public JsonArray samples() {
    Map<String, Integer> taken = new LinkedHashMap<>();
    JsonArray out = new JsonArray();
    for (Change c : changes) {
      String slot = c.table() + "\u0000" + c.op();
      int n = taken.merge(slot, 1, Integer::sum);
      if (n > SAMPLES_PER_TABLE_AND_OP) {
        continue;
      }
      JsonObject s = new JsonObject().put("table", c.table()).put("op", c.op());
      if (c.key() != null && c.wholeShown()) {
        s.put("key", c.key());
      }
      if (c.shown(c.before()) != null) {
        s.put("before", c.shown(c.before()));
      }
      if (c.shown(c.after()) != null) {
        s.put("after", c.shown(c.after()));
      }
      if (c.rowSecurity()) {
        s.put("images", "hidden: row-level security applies to your role on this table");
      }
      out.add(s);
    }
    return out;
  }

  /** One line for people: what the change does, e.g. "deletes 1 row of public.a and 4 rows of public.b". */
  public String describe() {
    if (changes.isEmpty()) {
      return "changes no rows";
    }
    List<String> parts = new ArrayList<>();
    for (Object o : perTable()) {
      JsonObject t = (JsonObject) o;
      List<String> ops = new ArrayList<>();
      if (t.getBoolean("truncated", false)) {
        ops.add("truncates");
      }
      addCount(ops, "inserts", t.getInteger("inserted"));
      addCount(ops, "updates", t.getInteger("updated"));
      addCount(ops, "deletes", t.getInteger("deleted"));
      parts.add(String.join(", ", ops) + " in " + t.getString("table"));
    }
    return String.join("; ", parts);
  }

  /** The same line from stored totals, for a confirmation asked without re-running the change. */
  static String describeTotals(JsonObject totals) {
    List<String> ops = new ArrayList<>();
    addCount(ops, "inserts", totals.getInteger("inserted", 0));
    addCount(ops, "updates", totals.getInteger("updated", 0));
    addCount(ops, "deletes", totals.getInteger("deleted", 0));
    return ops.isEmpty() ? "changes no rows" : String.join(", ", ops);
  }

  private static void addCount(List<String> ops, String verb, int n) {
    if (n > 0) {
      ops.add(verb + " " + n + (n == 1 ? " row" : " rows"));
    }
  }
}
