package dev.tidemark.database;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.data.Interval;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import io.vertx.sqlclient.data.Numeric;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.UUID;

/**
 * The one mapping between PostgreSQL values and JSON, documented in docs/reference/types.md:
 * rows to JSON on the way out, JSON params to bound values on the way in.
 */
public final class PgJson {

  private PgJson() {}

  /** A row as a JSON object; a repeated column name gets a suffix _2, _3, ... */
  public static JsonObject row(Row row) {
    return row(row, row.size());
  }

  /** The first {@code count} columns of a row as a JSON object. */
  public static JsonObject row(Row row, int count) {
    JsonObject out = new JsonObject();
    for (int i = 0; i < count; i++) {
      out.put(uniqueName(out, row.getColumnName(i)), value(row.getValue(i)));
    }
    return out;
  }

  static String uniqueName(JsonObject taken, String name) {
    if (!taken.containsKey(name)) {
      return name;
    }
    int n = 2;
    while (taken.containsKey(name + "_" + n)) {
      n++;
    }
    return name + "_" + n;
  }

  /** One value as JSON: see docs/reference/types.md. */
  public static Object value(Object v) {
    if (v == null || v == Tuple.JSON_NULL) {
      return null;
    }
    if (v instanceof Boolean || v instanceof Short || v instanceof Integer || v instanceof Long || v instanceof String) {
      return v;
    }
    if (v instanceof Float f) {
      return Float.isFinite(f) ? f.doubleValue() : f.toString();
    }
    if (v instanceof Double d) {
      return Double.isFinite(d) ? d : d.toString();
    }
    if (v instanceof Numeric n) {
      return n.isNaN() ? "NaN" : n.bigDecimalValue() == null ? n.toString() : n.bigDecimalValue().toPlainString();
    }
    if (v instanceof BigDecimal b) {
      return b.toPlainString();
    }
    if (v instanceof BigInteger b) {
      return b.toString();
    }
    if (v instanceof OffsetDateTime t) {
      return DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(t);
    }
    if (v instanceof LocalDateTime t) {
      return DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(t);
    }
    if (v instanceof LocalTime t) {
      return DateTimeFormatter.ISO_LOCAL_TIME.format(t);
    }
    if (v instanceof OffsetTime t) {
      return DateTimeFormatter.ISO_OFFSET_TIME.format(t);
    }
    if (v instanceof LocalDate || v instanceof UUID) {
      return v.toString();
    }
    if (v instanceof Interval i) {
      return interval(i);
    }
    if (v instanceof Buffer b) {
      return Base64.getEncoder().encodeToString(b.getBytes());
    }
    if (v instanceof JsonObject || v instanceof JsonArray) {
      return v;
    }
    if (v.getClass().isArray()) {
      JsonArray out = new JsonArray();
      for (int i = 0; i < Array.getLength(v); i++) {
        out.add(value(Array.get(v, i)));
      }
      return out;
    }
    return v.toString();
  }

  /** An interval as an ISO 8601 duration, e.g. P1Y2M3DT4H5M6.5S; PT0S when zero. */
  static String interval(Interval i) {
    StringBuilder s = new StringBuilder("P");
    if (i.getYears() != 0) {
      s.append(i.getYears()).append('Y');
    }
    if (i.getMonths() != 0) {
      s.append(i.getMonths()).append('M');
    }
    if (i.getDays() != 0) {
      s.append(i.getDays()).append('D');
    }
    long micros = i.getMicroseconds() + (long) i.getSeconds() * 1_000_000L;
    if (i.getHours() != 0 || i.getMinutes() != 0 || micros != 0) {
      s.append('T');
      if (i.getHours() != 0) {
        s.append(i.getHours()).append('H');
      }
      if (i.getMinutes() != 0) {
        s.append(i.getMinutes()).append('M');
      }
      if (micros != 0) {
        s.append(BigDecimal.valueOf(micros, 6).stripTrailingZeros().toPlainString()).append('S');
      }
    }
    return s.length() == 1 ? "PT0S" : s.toString();
  }

  /** The text form PostgreSQL parses back into a value of a column's type (with a cast). */
  public static String text(Object json) {
    if (json instanceof JsonObject o) {
      return o.encode();
    }
    if (json instanceof JsonArray a) {
      return a.encode();
    }
    if (json instanceof Double || json instanceof Float || json instanceof BigDecimal) {
      return new BigDecimal(json.toString()).toPlainString();
    }
    return String.valueOf(json);
  }
}
