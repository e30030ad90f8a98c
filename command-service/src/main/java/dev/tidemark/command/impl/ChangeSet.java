package dev.tidemark.command.impl;

import dev.tidemark.database.RowImages;
import dev.tidemark.command.Canonical;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a transaction did, read from {@code tidemark.changes_of_current_transaction()}: every row
 * the capture triggers saw, so cascades and trigger effects count as much as the statement itself.
 */
public final class ChangeSet {

  /**
   * Before/after images shown per table and operation: enough for the user to see what kind of
   * row a change touches, while the counts say how many.
   */
  public static final int SAMPLES_PER_TABLE_AND_OP = 2;

  /**
   * One captured change. {@code readable} are the columns the caller's role may SELECT, and
   * {@code rowSecurity} whether row-level security applies to it on the table: the images are
   * whole, for the plan's fingerprint, but shown only as far as the caller may see them.
   */
  public record Change(String table, String op, Object key, JsonObject before, JsonObject after, Set<String> readable,
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

  /**
   * $1 is the server's MAC over the transaction id: see tidemark.changes_of_current_transaction.
   * The images also come as text, with the key as an image of the primary-key columns, for
   * {@link RowImages} to map as reads do (the jsonb values, decoded by Vert.x, feed the fingerprint).
   * OFFSET 0 keeps the planner from pulling the key-column subquery up: pulled up, it is copied
   * into each of the four expressions that use it, and runs four times per row.
   */
  public static final String SQL = """
      SELECT c.schema_name, c.table_name, c.op, c.key, c.before, c.after, c.readable_columns, c.row_security,
             c.before::text AS before_text, c.after::text AS after_text,
             CASE WHEN jsonb_typeof(c.key) = 'object' THEN c.key::text
                  WHEN jsonb_typeof(c.key) = 'array' AND jsonb_array_length(c.key) = cardinality(k.columns) AND cardinality(k.columns) > 0
                  THEN (SELECT jsonb_object_agg(u.col, c.key -> (u.n - 1)::int) FROM unnest(k.columns) WITH ORDINALITY u(col, n))::text
             END AS key_text, k.columns AS key_columns, format('%I.%I', c.schema_name, c.table_name) AS relation
        FROM tidemark.changes_of_current_transaction($1) c
        CROSS JOIN LATERAL (SELECT ARRAY(SELECT a.attname::text FROM pg_index i
                                           CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY x(attnum, n)
                                           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = x.attnum
                                          WHERE i.indrelid = to_regclass(format('%I.%I', c.schema_name, c.table_name)) AND i.indisprimary
                                          ORDER BY x.n) AS columns OFFSET 0) k
       ORDER BY c.id""";

  private final List<Change> changes;
  /**
   * Each change's table, operation and images as PostgreSQL wrote them ({@code jsonb::text}, which
   * is one text per value: keys sorted, numbers with their scale): what {@link #imagesHash} hashes,
   * so that no digit is lost to a double on the way.
   */
  private final List<String> exact;
  /** The sampled changes (or all of them, see {@link #withImages}), by index in {@link #changes}, with images mapped as reads map rows. */
  private final Map<Integer, Change> shown;
  /** The rows {@link #changes} were read from, kept until the samples are mapped (a commit never shows them). */
  private final List<Row> raw;

  public ChangeSet(List<Change> changes) {
    this(changes, changes.stream().map(c -> exact(c.table(), c.op(), c.before() == null ? null : Canonical.json(c.before()),
        c.after() == null ? null : Canonical.json(c.after()))).toList(), Map.of(), List.of());
  }

  private ChangeSet(List<Change> changes, List<String> exact, Map<Integer, Change> shown, List<Row> raw) {
    this.changes = List.copyOf(changes);
    this.exact = List.copyOf(exact);
    this.shown = Map.copyOf(shown);
    this.raw = raw;
  }

  private static String exact(String table, String op, String before, String after) {
    return table + "\u0000" + op + "\u0000" + before + "\u0000" + after;
  }

  /**
   * What the transaction on {@code conn} captured; {@code mac} as {@link #SQL} needs it. The
   * samples are not mapped yet: see {@link #withSamples}.
   */
  public static Future<ChangeSet> read(SqlConnection conn, String mac) {
    return conn.preparedQuery(SQL).execute(Tuple.of(mac)).map(rows -> {
      List<Change> changes = new ArrayList<>();
      List<String> exact = new ArrayList<>();
      List<Row> raw = new ArrayList<>();
      for (Row r : rows) {
        if ("DDL".equals(r.getString("op"))) {
          continue;
        }
        String[] readable = r.getArrayOfStrings("readable_columns");
        String table = r.getString("schema_name") + "." + r.getString("table_name");
        changes.add(new Change(table, r.getString("op"), r.getValue("key"),
            (JsonObject) r.getValue("before"), (JsonObject) r.getValue("after"),
            readable == null ? Set.of() : Set.of(readable), Boolean.TRUE.equals(r.getBoolean("row_security"))));
        exact.add(exact(table, r.getString("op"), r.getString("before_text"), r.getString("after_text")));
        raw.add(r);
      }
      return new ChangeSet(changes, exact, Map.of(), raw);
    });
  }

  /**
   * This change set with its samples' key, before and after mapped as get_row shows them, by a
   * statement on {@code conn} in the change's still open transaction. Only what shows samples (a
   * plan, a proposal) asks for it: a commit's answer has none, and mapping cost each commit a
   * round trip of three statements.
   */
  public Future<ChangeSet> withSamples(SqlConnection conn) {
    return mapped(conn, sampled(changes));
  }

  /**
   * This change set with every change's key, before and after mapped as get_row shows them: what
   * a proposal shows the people who decide ({@link #rows}), and its samples. One statement per
   * table, as {@link #withSamples}.
   */
  public Future<ChangeSet> withImages(SqlConnection conn) {
    return mapped(conn, java.util.stream.IntStream.range(0, changes.size()).boxed().toList());
  }

  private Future<ChangeSet> mapped(SqlConnection conn, List<Integer> indexes) {
    if (raw.size() != changes.size()) {
      return Future.succeededFuture(this);  // built from changes, not read: nothing to map
    }
    return RowImages.ofChanges(conn, indexes.stream().map(raw::get).toList()).map(images -> {
      Map<Integer, Change> out = new HashMap<>();
      for (int j = 0; j < indexes.size(); j++) {
        Change c = changes.get(indexes.get(j));
        RowImages.Images m = images.get(j);
        out.put(indexes.get(j), new Change(c.table(), c.op(), m.key(), m.before(), m.after(), c.readable(), c.rowSecurity()));
      }
      return new ChangeSet(changes, exact, out, List.of());
    });
  }

  /**
   * A hash of every row the change wrote, whole: its table, operation, and before and after images
   * as PostgreSQL wrote them, cascades and trigger effects included. Sorted, so that the order the
   * rows were visited in does not matter; any other value in any image, a row more or a row less,
   * changes it. An approval writes only what hashes as the proposal did.
   */
  public String imagesHash() {
    List<String> entries = new ArrayList<>(exact);
    Collections.sort(entries);
    return Canonical.hash(String.join("\n", entries));
  }

  /**
   * Every change, whole and in the order it was made, as people who decide on it are shown it:
   * {@code table}, {@code op}, {@code key}, {@code before}, {@code after} (every column, mapped as
   * get_row maps a row once {@link #withImages} ran), and for an update {@code changed}, the columns
   * whose value it changes.
   */
  public JsonArray rows() {
    JsonArray out = new JsonArray();
    for (int i = 0; i < changes.size(); i++) {
      Change c = shown.getOrDefault(i, changes.get(i));
      JsonObject row = new JsonObject().put("table", c.table()).put("op", c.op());
      if (c.key() != null) {
        row.put("key", c.key());
      }
      if (c.before() != null) {
        row.put("before", c.before());
      }
      if (c.after() != null) {
        row.put("after", c.after());
      }
      if ("UPDATE".equals(c.op()) && c.before() != null && c.after() != null) {
        JsonArray changed = new JsonArray();
        c.after().fieldNames().stream().filter(col -> !java.util.Objects.equals(c.before().getValue(col), c.after().getValue(col)))
            .forEach(changed::add);
        row.put("changed", changed);
      }
      out.add(row);
    }
    return out;
  }

  public boolean isEmpty() {
    return changes.isEmpty();
  }

  /** How many row changes (inserts, updates, deletes; not truncations) were captured. */
  public long rowChanges() {
    return changes.stream().filter(c -> !c.op().equals("TRUNCATE")).count();
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

  /** The most keys {@link #perOperation} shows for one table and operation: enough to consent to, bounded as samples are. */
  public static final int KEYS_PER_TABLE_AND_OP = 20;

  /**
   * Rows per table and operation, in the order first touched, with the keys of the rows updated
   * or deleted (up to {@link #KEYS_PER_TABLE_AND_OP}; a one-column key as its value), where the
   * caller may see the whole row: what a plan's text shows of the change, the rows themselves
   * being in its samples.
   */
  public JsonArray perOperation() {
    Map<String, JsonObject> ops = new LinkedHashMap<>();
    for (Change c : changes) {
      JsonObject o = ops.computeIfAbsent(c.table() + "\u0000" + c.op(),
          k -> new JsonObject().put("table", c.table()).put("op", c.op()).put("rows", 0));
      o.put("rows", o.getInteger("rows") + 1);
      if ((c.op().equals("UPDATE") || c.op().equals("DELETE")) && c.key() != null && c.wholeShown()) {
        JsonArray keys = o.getJsonArray("keys", new JsonArray());
        if (keys.size() < KEYS_PER_TABLE_AND_OP) {
          keys.add(c.key() instanceof JsonArray k && k.size() == 1 ? k.getValue(0) : c.key());
        }
        o.put("keys", keys);
      }
    }
    ops.values().forEach(o -> {
      if ("TRUNCATE".equals(o.getString("op"))) {
        o.putNull("rows");
      }
    });
    return new JsonArray(new ArrayList<>(ops.values()));
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

  /** The indexes of the changes shown as samples: the first few of each table and operation. */
  private static List<Integer> sampled(List<Change> changes) {
    Map<String, Integer> taken = new LinkedHashMap<>();
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < changes.size(); i++) {
      Change c = changes.get(i);
      if (taken.merge(c.table() + "\u0000" + c.op(), 1, Integer::sum) <= SAMPLES_PER_TABLE_AND_OP) {
        out.add(i);
      }
    }
    return out;
  }

  public JsonArray samples() {
    JsonArray out = new JsonArray();
    for (int i : sampled(changes)) {
      Change c = shown.getOrDefault(i, changes.get(i));
      JsonObject s = new JsonObject().put("table", c.table()).put("op", c.op());
      if (c.key() != null && c.wholeShown()) {
        s.put("key", c.key());
      }
      JsonObject before = c.shown(c.before());
      JsonObject after = c.shown(c.after());
      if ("UPDATE".equals(c.op()) && before != null && after != null) {
        // the key names the row; the columns that keep their value would only repeat it
        JsonObject changedBefore = new JsonObject();
        JsonObject changedAfter = new JsonObject();
        for (String column : after.fieldNames()) {
          if (!java.util.Objects.equals(before.getValue(column), after.getValue(column))) {
            changedBefore.put(column, before.getValue(column));
            changedAfter.put(column, after.getValue(column));
          }
        }
        before = changedBefore;
        after = changedAfter;
      }
      if (before != null) {
        s.put("before", before);
      }
      if (after != null) {
        s.put("after", after);
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
      return NO_ROWS;
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

  /** What {@link #describe} says of a change that changes no rows. */
  static final String NO_ROWS = "changes no rows";

  private static void addCount(List<String> ops, String verb, int n) {
    if (n > 0) {
      ops.add(verb + " " + n + (n == 1 ? " row" : " rows"));
    }
  }
}
