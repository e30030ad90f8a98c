package dev.tidemark.query.impl;

import dev.tidemark.contract.ChangeCause;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The events tools' changes, shown without a statement over the records: for tables whose row
 * security does not apply to the caller and whose readable columns are all of types whose captured
 * value already is what a read shows (see {@link #value}). One catalog statement per lease asks
 * PostgreSQL, as Tidemark's login but for the caller's role, which tables and columns the role may
 * read now; the records' images are then filtered and mapped here. A lease with any other table (row
 * security, a numeric or json column, an array, a domain, a change caused by an event or a
 * proposal, whose cause is read from tidemark.change_attribution) is shown by {@link ChangesSinceTool}'s
 * statements instead, whole: both give the same change for the same record (EventsIT compares them
 * with changes_since).
 */
final class PlainChanges {

  /**
   * For each table of the lease as it is named now: whether the role may read any of it, whether
   * row security applies to it, its key columns when it is captured, and the columns the role may
   * read, in column order, with their types (0 for an enum) and type modifiers.
   */
  private static final String TABLES = """
      SELECT w.schema_name, w.table_name,
             has_any_column_privilege($1, c.oid, 'SELECT') AS readable,
             c.relrowsecurity AND NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1 AND (rolbypassrls OR rolsuper))
               AS row_security,
             t.relid IS NOT NULL AS captured, t.key_columns, a.cols, a.types, a.typmods
        FROM unnest($2::text[], $3::text[]) AS w(schema_name, table_name)
        JOIN pg_class c ON c.oid = to_regclass(format('%I.%I', w.schema_name, w.table_name))
        LEFT JOIN tidemark.captured_table t ON t.relid = c.oid
        LEFT JOIN LATERAL (
          SELECT array_agg(a.attname::text ORDER BY a.attnum) AS cols,
                 array_agg(CASE WHEN ty.typtype = 'e' THEN 0 ELSE a.atttypid::int END ORDER BY a.attnum) AS types,
                 array_agg(a.atttypmod ORDER BY a.attnum) AS typmods
            FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
             AND has_column_privilege($1, c.oid, a.attnum, 'SELECT')) a ON true""";

  private static final int ENUM = 0;
  private static final int BOOL = 16;
  private static final int INT8 = 20;
  private static final int INT2 = 21;
  private static final int INT4 = 23;
  private static final int TEXT = 25;
  private static final int VARCHAR = 1043;
  private static final int DATE = 1082;
  private static final int TIMESTAMP = 1114;
  private static final int TIMESTAMPTZ = 1184;
  private static final int UUID_TYPE = 2950;
  /** Types whose captured value is what a read shows; a name is not (a value typed as text before may exceed its 63 bytes). */
  private static final Set<Integer> KNOWN = Set.of(ENUM, BOOL, INT8, INT2, INT4, TEXT, VARCHAR, DATE, TIMESTAMP, TIMESTAMPTZ, UUID_TYPE);
  /** A uuid as PostgreSQL writes one; other spellings (a column that was text before) go the statements' way. */
  private static final java.util.regex.Pattern CANONICAL_UUID =
      java.util.regex.Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

  /** A table of the lease as the caller's role sees it now. */
  private record Table(boolean readable, boolean rowSecurity, boolean captured, String[] keyColumns, String[] columns, int[] types,
      int[] typmods) {

    int type(String column) {
      for (int i = 0; i < columns.length; i++) {
        if (columns[i].equals(column)) {
          return i;
        }
      }
      return -1;
    }
  }

  /** Thrown where a value is not one this class maps as a read would: the lease goes the statements' way. */
  private static final class NotPlain extends RuntimeException {
    NotPlain() {
      super(null, null, false, false);
    }
  }

  private static final NotPlain NOT_PLAIN = new NotPlain();

  private final Pool pool;

  /** @param pool Tidemark's login, which may read the catalogs and schema tidemark */
  PlainChanges(Pool pool) {
    this.pool = pool;
  }

  /**
   * The changes of {@code records} as changes_since shows them to {@code role}, by change id,
   * those it may not see left out; null when a record is of a table this class does not show.
   */
  Future<Map<Long, JsonObject>> show(String role, Set<String> schemas, JsonArray records) {
    Set<List<String>> names = new LinkedHashSet<>();
    for (Object o : records) {
      JsonObject r = (JsonObject) o;
      names.add(List.of(r.getString("schema"), r.getString("table")));
    }
    String[] schemaNames = names.stream().map(n -> n.get(0)).toArray(String[]::new);
    String[] tableNames = names.stream().map(n -> n.get(1)).toArray(String[]::new);
    return pool.preparedQuery(TABLES).execute(Tuple.of(role, schemaNames, tableNames)).map(rows -> {
      Map<List<String>, Table> tables = new HashMap<>();
      for (Row r : rows) {
        Table t = new Table(Boolean.TRUE.equals(r.getBoolean("readable")), !Boolean.FALSE.equals(r.getBoolean("row_security")),
            Boolean.TRUE.equals(r.getBoolean("captured")), r.getArrayOfStrings("key_columns"), orEmpty(r.getArrayOfStrings("cols")),
            ints(r.getArrayOfIntegers("types")), ints(r.getArrayOfIntegers("typmods")));
        if (t.readable() && t.rowSecurity()) {
          return null;  // what the role may see of it is the policies' to say: read as the caller
        }
        for (int type : t.types()) {
          if (!KNOWN.contains(type)) {
            return null;
          }
        }
        tables.put(List.of(r.getString("schema_name"), r.getString("table_name")), t);
      }
      try {
        Map<Long, JsonObject> out = new HashMap<>();
        for (Object o : records) {
          JsonObject r = (JsonObject) o;
          Table t = tables.get(List.of(r.getString("schema"), r.getString("table")));
          if (t == null || !t.readable() || !schemas.contains(r.getString("schema")) || "DDL".equals(r.getString("op"))) {
            continue;  // a table gone or renamed since, one the role may not read, or not served
          }
          if (r.getString("idempotency_key") != null || r.getString("plan_id") != null) {
            // caused_by and proposal come from tidemark.change_attribution alone, as changes_since
            // reads them; the record's copy may be of a pruned or an unsigned attribution
            throw NOT_PLAIN;
          }
          out.put(r.getJsonObject("position").getLong("change"), change(r, t));
        }
        return out;
      } catch (NotPlain e) {
        return null;
      }
    });
  }

  private static JsonObject change(JsonObject r, Table t) {
    JsonObject c = new JsonObject()
        .put("position", r.getString("cursor"))
        .put("schema", r.getString("schema"))
        .put("table", r.getString("table"))
        .put("op", r.getString("op"));
    putIfPresent(c, "key", key(r.getValue("key"), t));
    putIfPresent(c, "before", image(r.getValue("before"), t));
    putIfPresent(c, "after", image(r.getValue("after"), t));
    c.put("committed_at", OffsetDateTime.parse(r.getString("committed_at")).withOffsetSameInstant(ZoneOffset.UTC).toString())
        .put("transaction", r.getString("transaction"));
    putIfPresent(c, "caller", r.getString("caller"));
    putIfPresent(c, "tool", r.getString("tool"));
    putIfPresent(c, "caused_by", ChangeCause.of(r.getString("idempotency_key")));
    String plan = r.getString("plan_id");
    if (plan != null && plan.startsWith(ChangeCause.PROPOSAL_PREFIX)) {
      c.put("proposal", plan.substring(ChangeCause.PROPOSAL_PREFIX.length()));
    }
    return c;
  }

  /**
   * The key as reads show it: a captured table's key array when the role may read every key
   * column, its values mapped; a table without a primary key is keyed by its row, of which the
   * readable columns are shown; a table no longer captured shows none.
   */
  private static Object key(Object captured, Table t) {
    if (!t.captured() || captured == null) {
      return null;
    }
    String[] keyColumns = t.keyColumns();
    if (keyColumns == null || keyColumns.length == 0) {
      return captured instanceof JsonObject row ? image(row, t) : null;
    }
    for (String k : keyColumns) {
      if (t.type(k) < 0) {
        return null;  // a key column the role may not read: the key would show it
      }
    }
    if (!(captured instanceof JsonArray values) || values.size() != keyColumns.length) {
      throw NOT_PLAIN;  // a key of another shape than the table's key now: the statements' way shows it as captured
    }
    JsonArray out = new JsonArray();
    for (int i = 0; i < keyColumns.length; i++) {
      int at = t.type(keyColumns[i]);
      out.add(value(t.types()[at], t.typmods()[at], values.getValue(i)));
    }
    return out;
  }

  /** The columns of {@code image} the role may read, in column order, mapped; null when none is left. */
  private static JsonObject image(Object image, Table t) {
    if (!(image instanceof JsonObject row)) {
      return null;
    }
    JsonObject out = new JsonObject();
    String[] columns = t.columns();
    for (int i = 0; i < columns.length; i++) {
      if (row.containsKey(columns[i])) {
        out.put(columns[i], value(t.types()[i], t.typmods()[i], row.getValue(columns[i])));
      }
    }
    return out.isEmpty() ? null : out;
  }

  /**
   * A captured value (as the decoder wrote it, in to_jsonb's form) of a column of {@code type} as
   * the read tools show it (docs/reference/types.md); {@link #NOT_PLAIN} when it does not fit the
   * column as it is now (its type changed since), which the statements' way handles.
   */
  private static Object value(int type, int typmod, Object v) {
    if (v == null) {
      return null;
    }
    try {
      switch (type) {
        case BOOL:
          if (v instanceof Boolean) {
            return v;
          }
          break;
        case INT2, INT4, INT8:
          if (v instanceof Integer || v instanceof Long) {
            long n = ((Number) v).longValue();
            if (type == INT8 || (type == INT4 ? n == (int) n : n == (short) n)) {
              return v;
            }
          }
          break;
        case TEXT, ENUM:
          if (v instanceof String) {
            return v;
          }
          break;
        case VARCHAR:
          if (v instanceof String s && (typmod < 0 || s.codePointCount(0, s.length()) <= typmod - 4)) {
            return v;
          }
          break;
        case UUID_TYPE:
          if (v instanceof String s && CANONICAL_UUID.matcher(s).matches()) {
            return s;
          }
          break;
        case DATE:
          if (v instanceof String s) {
            return LocalDate.parse(s).toString();
          }
          break;
        case TIMESTAMP:
          if (v instanceof String s) {
            return DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(LocalDateTime.parse(s));
          }
          break;
        case TIMESTAMPTZ:
          if (v instanceof String s) {
            return DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(OffsetDateTime.parse(s).withOffsetSameInstant(ZoneOffset.UTC));
          }
          break;
        default:
          break;
      }
    } catch (DateTimeParseException e) {
      // infinity, a year past 9999 or before Christ: PostgreSQL maps those
    }
    throw NOT_PLAIN;
  }

  private static String[] orEmpty(String[] a) {
    return a == null ? new String[0] : a;
  }

  private static int[] ints(Integer[] a) {
    if (a == null) {
      return new int[0];
    }
    int[] out = new int[a.length];
    for (int i = 0; i < a.length; i++) {
      out[i] = a[i];
    }
    return out;
  }

  private static void putIfPresent(JsonObject o, String field, Object value) {
    if (value != null) {
      o.put(field, value);
    }
  }
}
