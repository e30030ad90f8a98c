package dev.tidemark.changelog.impl;

import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a column value in PostgreSQL's text output form (as pgoutput sends it) into the JSON value
 * {@code to_jsonb} gives for it, so that decoded images look like the ones the capture triggers
 * wrote: numbers and booleans as JSON numbers and booleans, json and jsonb parsed, timestamps in
 * ISO 8601 with a 'T', arrays of these as JSON arrays, everything else as its text.
 */
public final class TextValues {

  private TextValues() {}

  public static Object toJson(int typeOid, String text) {
    if (text == null) {
      return null;
    }
    int element = elementType(typeOid);
    if (element != 0) {
      return array(element, text);
    }
    switch (typeOid) {
      case 16:
        return "t".equals(text);
      case 20, 21, 23, 26:
        return Long.parseLong(text);
      case 700, 701:
        return switch (text) {
          case "NaN", "Infinity", "-Infinity" -> text;
          default -> Double.parseDouble(text);
        };
      case 1700:
        return switch (text) {
          case "NaN", "Infinity", "-Infinity" -> text;
          default -> new BigDecimal(text);
        };
      case 114, 3802:
        return Json.decodeValue(text);
      case 1114:
        return text.replaceFirst(" ", "T");
      case 1184:
        return offset(text.replaceFirst(" ", "T"));
      case 1266:
        return offset(text);
      default:
        return text;
    }
  }

  /** "+00" becomes "+00:00", as to_jsonb writes an offset; "+05:30" stays. */
  private static String offset(String text) {
    int n = text.length();
    if (n >= 3 && (text.charAt(n - 3) == '+' || text.charAt(n - 3) == '-') && Character.isDigit(text.charAt(n - 1))
        && Character.isDigit(text.charAt(n - 2))) {
      return text + ":00";
    }
    return text;
  }

  /** The element type of the built-in array types whose elements map to JSON by type; 0 otherwise. */
  static int elementType(int typeOid) {
    return switch (typeOid) {
      case 1000 -> 16;
      case 1005 -> 21;
      case 1007 -> 23;
      case 1016 -> 20;
      case 1028 -> 26;
      case 1021 -> 700;
      case 1022 -> 701;
      case 1231 -> 1700;
      case 199 -> 114;
      case 3807 -> 3802;
      case 1115 -> 1114;
      case 1185 -> 1184;
      case 1009, 1015, 1014, 2951, 1182, 1183 -> 25;  // text, varchar, bpchar, uuid, date, time
      default -> 0;
    };
  }

  private static Object array(int element, String text) {
    int[] at = {0};
    // an array with explicit bounds ("[0:1]={...}") starts at its '='
    if (text.startsWith("[")) {
      at[0] = text.indexOf('=') + 1;
    }
    return parseArray(element, text, at);
  }

  private static JsonArray parseArray(int element, String s, int[] at) {
    List<Object> out = new ArrayList<>();
    at[0]++;  // '{'
    if (s.charAt(at[0]) == '}') {
      at[0]++;
      return new JsonArray(out);
    }
    while (true) {
      char c = s.charAt(at[0]);
      if (c == '{') {
        out.add(parseArray(element, s, at));
      } else if (c == '"') {
        StringBuilder b = new StringBuilder();
        at[0]++;
        while (s.charAt(at[0]) != '"') {
          if (s.charAt(at[0]) == '\\') {
            at[0]++;
          }
          b.append(s.charAt(at[0]++));
        }
        at[0]++;
        out.add(toJson(element, b.toString()));
      } else {
        int start = at[0];
        while (s.charAt(at[0]) != ',' && s.charAt(at[0]) != '}') {
          at[0]++;
        }
        String raw = s.substring(start, at[0]);
        out.add("NULL".equals(raw) ? null : toJson(element, raw));
      }
      char next = s.charAt(at[0]++);
      if (next == '}') {
        return new JsonArray(out);
      }
    }
  }
}
