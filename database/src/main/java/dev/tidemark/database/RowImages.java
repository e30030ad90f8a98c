package dev.tidemark.database;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Captured row images shown as the read tools show rows (docs/reference/types.md). The capture
 * triggers store a row as {@code to_jsonb(row)}, whose JSON spells values its own way: numeric as
 * a JSON number (a double once Vert.x decodes it), timestamptz in the session's offset, bytea as
 * {@code \x} hex, interval in PostgreSQL's text form, keys sorted. Handing the image back to
 * PostgreSQL with {@code jsonb_populate_record(NULL::table, image)} gives the table's typed
 * columns, which {@link PgJson} maps exactly as it maps a row read by get_row, in column order.
 * Images travel as text, so no digit is lost on the way.
 */
public final class RowImages {

  private RowImages() {}

  /** A change's key, before and after, as shown. */
  public record Images(Object key, JsonObject before, JsonObject after) {}

  /**
   * The key, before and after of each change in {@code rows}, as get_row shows rows, one
   * statement per table, one table after the other (they share the transaction and its
   * savepoint). Each row has the columns {@code relation} (quoted and qualified), {@code key} (as
   * captured), {@code key_columns}, and the text of the key's image ({@code key_text}: the key
   * columns with their values, or the row of a table without a primary key), {@code before_text}
   * and {@code after_text}.
   */
  public static Future<List<Images>> ofChanges(SqlConnection conn, List<Row> rows) {
    Map<String, List<Integer>> byTable = new LinkedHashMap<>();
    for (int i = 0; i < rows.size(); i++) {
      byTable.computeIfAbsent(rows.get(i).getString("relation"), t -> new ArrayList<>()).add(i);
    }
    Images[] out = new Images[rows.size()];
    Future<Void> done = Future.succeededFuture();
    for (Map.Entry<String, List<Integer>> e : byTable.entrySet()) {
      List<String> texts = new ArrayList<>();
      for (int i : e.getValue()) {
        Row r = rows.get(i);
        texts.add(r.getString("key_text"));
        texts.add(r.getString("before_text"));
        texts.add(r.getString("after_text"));
      }
      done = done.compose(v -> decode(conn, e.getKey(), texts).map(decoded -> {
        for (int j = 0; j < e.getValue().size(); j++) {
          int i = e.getValue().get(j);
          Row r = rows.get(i);
          out[i] = new Images(key(r.getValue("key"), decoded.get(3 * j), r.getArrayOfStrings("key_columns")),
              decoded.get(3 * j + 1), decoded.get(3 * j + 2));
        }
        return null;
      }));
    }
    return done.map(v -> Arrays.asList(out));
  }

  /**
   * {@code images} (each the text of a jsonb object, or null) of table {@code relation} (quoted and
   * qualified), mapped as get_row maps a row, with the columns each image holds. Runs on
   * {@code conn}, inside its transaction, under a savepoint: an image that no longer fits its table
   * (a column's type changed since the change) leaves the transaction usable and is returned as it
   * was captured.
   */
  private static final String DECODE = "SELECT r.* FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS e(image, n)";

  /**
   * Whether {@code sql} is a statement of {@link #decode}, whose rows have the table's row type:
   * kept prepared, it would fail with "cached plan must not change result type" once a column is
   * added, and the Vert.x client recognises that failure, to prepare the statement again, only by
   * its English wording.
   */
  static boolean decodes(String sql) {
    return sql.startsWith(DECODE);
  }

  public static Future<List<JsonObject>> decode(SqlConnection conn, String relation, List<String> images) {
    List<String> present = images.stream().filter(i -> i != null).toList();
    if (present.isEmpty()) {
      return Future.succeededFuture(asCaptured(images));
    }
    String sql = DECODE + " CROSS JOIN LATERAL jsonb_populate_record(NULL::" + relation + ", e.image) AS r ORDER BY e.n";
    String array = "[" + String.join(",", present) + "]";
    // one round trip: the three go out together and run in order; when the SELECT fails, the
    // release fails too (the transaction is aborted), and rolling back to the savepoint restores it
    Future<?> saved = conn.query("SAVEPOINT tidemark_images").execute();
    Future<RowSet<Row>> selected = conn.preparedQuery(sql).execute(Tuple.of(array));
    Future<?> released = conn.query("RELEASE SAVEPOINT tidemark_images").execute();
    return Future.join(saved, selected, released).transform(x -> {
      if (saved.failed()) {
        return Future.failedFuture(saved.cause());
      }
      if (selected.failed() || released.failed()) {
        return conn.query("ROLLBACK TO SAVEPOINT tidemark_images").execute().map(r -> asCaptured(images));
      }
      Iterator<Row> it = selected.result().iterator();
      List<JsonObject> out = new ArrayList<>();
      for (String image : images) {
        out.add(image == null ? null : only(PgJson.row(it.next()), new JsonObject(image).fieldNames()));
      }
      return Future.succeededFuture(out);
    });
  }

  /**
   * A captured key as reads show its values: a key array becomes the mapped key columns in key
   * order ({@code mapped} is the image of those columns), the key of a table without a primary key
   * (the row itself) its mapped image. Without a mapped image the key stays as captured.
   */
  static Object key(Object captured, JsonObject mapped, String[] columns) {
    if (mapped == null || columns == null) {
      return captured;
    }
    if (!(captured instanceof JsonArray)) {
      return mapped;
    }
    JsonArray out = new JsonArray();
    for (String column : columns) {
      out.add(mapped.getValue(column));
    }
    return out;
  }

  /** The columns of {@code row} that {@code image} holds (the filtered image, or the table's columns at the time), in column order. */
  private static JsonObject only(JsonObject row, Set<String> columns) {
    JsonObject out = new JsonObject();
    row.forEach(e -> {
      if (columns.contains(e.getKey())) {
        out.put(e.getKey(), e.getValue());
      }
    });
    return out;
  }

  private static List<JsonObject> asCaptured(List<String> images) {
    List<JsonObject> out = new ArrayList<>();
    for (String image : images) {
      out.add(image == null ? null : new JsonObject(image));
    }
    return out;
  }
}
