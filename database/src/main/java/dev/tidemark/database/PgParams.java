package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import io.vertx.sqlclient.data.Numeric;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.UUID;

/**
 * Binds the JSON params of {@code query} and {@code explain}. Each $n has the type PostgreSQL
 * infers for it (write $1::uuid to choose); its JSON value is converted to that type with the
 * same mapping rows use on the way out (docs/reference/types.md), so a value read can be sent
 * back as it came.
 */
public final class PgParams {

  private PgParams() {}

  /** The tuple for {@code params} given the parameter types PostgreSQL inferred (format_type names). */
  public static Tuple bind(String[] types, JsonArray params) {
    int given = params == null ? 0 : params.size();
    if (given != types.length) {
      throw new ToolException(ErrorCode.INVALID_ARGUMENTS,
          "The statement has " + types.length + " parameter(s) ($1 ... $" + types.length + ") but params has " + given + " value(s). "
              + ErrorCode.INVALID_ARGUMENTS.hint(),
          new JsonObject().put("argument", "params"));
    }
    Tuple t = Tuple.tuple();
    for (int i = 0; i < given; i++) {
      t.addValue(convert(types[i], params.getValue(i), "/params/" + i));
    }
    return t;
  }

  static Object convert(String type, Object v, String pointer) {
    if (v == null) {
      return null;
    }
    if (type.endsWith("[]")) {
      if (!(v instanceof JsonArray a)) {
        throw fault(pointer, type, "an array");
      }
      String element = type.substring(0, type.length() - 2);
      Object[] converted = new Object[a.size()];
      Class<?> cls = null;
      for (int i = 0; i < a.size(); i++) {
        converted[i] = convert(element, a.getValue(i), pointer + "/" + i);
        if (converted[i] != null) {
          cls = cls == null ? converted[i].getClass() : cls;
        }
      }
      Class<?> elementClass = cls == null ? javaClass(element) : cls;
      Object out = Array.newInstance(elementClass, converted.length);
      for (int i = 0; i < converted.length; i++) {
        Array.set(out, i, converted[i]);
      }
      return out;
    }
    try {
      switch (type) {
        case "smallint": return number(v, pointer, type).shortValueExact();
        case "integer": return number(v, pointer, type).intValueExact();
        case "bigint": return number(v, pointer, type).longValueExact();
        case "numeric": return Numeric.create(number(v, pointer, type));
        case "real": return number(v, pointer, type).floatValue();
        case "double precision": return number(v, pointer, type).doubleValue();
        case "boolean":
          if (v instanceof Boolean b) {
            return b;
          }
          if ("true".equals(v) || "false".equals(v)) {
            return Boolean.parseBoolean((String) v);
          }
          throw fault(pointer, type, "true or false");
        case "uuid": return UUID.fromString(string(v, pointer, type));
        case "date": return LocalDate.parse(string(v, pointer, type));
        case "timestamp without time zone": return LocalDateTime.parse(string(v, pointer, type));
        case "timestamp with time zone": return OffsetDateTime.parse(string(v, pointer, type));
        case "time without time zone": return LocalTime.parse(string(v, pointer, type));
        case "time with time zone": return OffsetTime.parse(string(v, pointer, type));
        case "bytea": return Buffer.buffer(Base64.getDecoder().decode(string(v, pointer, type)));
        case "json", "jsonb": return v;
        default:
          // text, varchar, enums and every type the client has no codec for travel as text
          return v instanceof String s ? s : PgJson.text(v);
      }
    } catch (ArithmeticException | DateTimeParseException | IllegalArgumentException e) {
      throw fault(pointer, type, expected(type));
    }
  }

  private static Class<?> javaClass(String type) {
    return switch (type) {
      case "smallint" -> Short.class;
      case "integer" -> Integer.class;
      case "bigint" -> Long.class;
      case "numeric" -> Numeric.class;
      case "real" -> Float.class;
      case "double precision" -> Double.class;
      case "boolean" -> Boolean.class;
      case "uuid" -> UUID.class;
      case "date" -> LocalDate.class;
      case "timestamp without time zone" -> LocalDateTime.class;
      case "timestamp with time zone" -> OffsetDateTime.class;
      case "time without time zone" -> LocalTime.class;
      case "time with time zone" -> OffsetTime.class;
      case "bytea" -> Buffer.class;
      case "json", "jsonb" -> Object.class;
      default -> String.class;
    };
  }

  private static String expected(String type) {
    return switch (type) {
      case "smallint", "integer", "bigint" -> "a whole number in range (or its digits as a string)";
      case "numeric", "real", "double precision" -> "a number or a numeric string";
      case "uuid" -> "a UUID string";
      case "date" -> "an ISO 8601 date such as 2025-01-31";
      case "timestamp without time zone" -> "an ISO 8601 date and time such as 2025-01-31T12:00:00";
      case "timestamp with time zone" -> "an ISO 8601 date and time with an offset such as 2025-01-31T12:00:00Z";
      case "time without time zone" -> "an ISO 8601 time such as 12:00:00";
      case "time with time zone" -> "an ISO 8601 time with an offset such as 12:00:00+01:00";
      case "bytea" -> "base64 text";
      default -> "a value of type " + type;
    };
  }

  private static BigDecimal number(Object v, String pointer, String type) {
    if (v instanceof Number || v instanceof String) {
      try {
        return new BigDecimal(v.toString().trim());
      } catch (NumberFormatException e) {
        throw fault(pointer, type, expected(type));
      }
    }
    throw fault(pointer, type, expected(type));
  }

  private static String string(Object v, String pointer, String type) {
    if (v instanceof String s) {
      return s;
    }
    throw fault(pointer, type, expected(type));
  }

  private static ToolException fault(String pointer, String type, String expected) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS,
        "Argument params does not fit at " + pointer + ": the parameter is " + type + ", expected " + expected + ". "
            + ErrorCode.INVALID_ARGUMENTS.hint(),
        new JsonObject().put("argument", "params")
            .put("faults", new JsonArray().add(new JsonObject().put("pointer", pointer).put("expected", expected))));
  }
}
