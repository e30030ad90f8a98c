package dev.tidemark.command.impl;

import dev.tidemark.command.Canonical;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * What differs between the rows a proposal showed ({@link ChangeSet#rows}, kept with it) and the
 * rows its change would write now: the reason an approval gives when it refuses a stale proposal.
 * Whether a proposal is stale is decided by {@link ChangeSet#imagesHash}, over the images as
 * PostgreSQL wrote them; this only says where, for the people who read the reason.
 */
final class ShownRows {

  /** A row changed since it was shown: its before-image differs. */
  static final String CHANGED_SINCE = "changed_since";
  /** A row would be written with other values than shown: its after-image differs. */
  static final String OTHER_VALUES = "other_values";
  /** A row shown would no longer be written. */
  static final String NOT_WRITTEN = "not_written";
  /** A row not shown would be written too. */
  static final String ALSO_WRITTEN = "also_written";

  private ShownRows() {}

  /**
   * Each row of {@code shown} and {@code now} that differs: {@code table}, {@code op}, {@code key}
   * (the shown row's where there is one), {@code difference} (one of the constants above) and
   * {@code columns} (those whose value differs). Rows are paired by table, operation and key, and
   * what is left by table and operation in order (an inserted row whose generated key differs is
   * the same row with another key).
   */
  static JsonArray differences(JsonArray shown, JsonArray now) {
    List<JsonObject> before = unmatched(entries(shown), entries(now));
    List<JsonObject> after = unmatched(entries(now), entries(shown));
    JsonArray out = new JsonArray();
    pair(before, after, r -> r.getString("table") + "\u0000" + r.getString("op") + "\u0000" + Canonical.json(r.getValue("key")), out);
    pair(before, after, r -> r.getString("table") + "\u0000" + r.getString("op"), out);
    before.forEach(r -> out.add(difference(r, NOT_WRITTEN, List.of())));
    after.forEach(r -> out.add(difference(r, ALSO_WRITTEN, List.of())));
    return out;
  }

  /**
   * One sentence per table and kind of difference, e.g. "public.salary: 1 updated row would be
   * written with other values (amount)"; the values themselves are never named (the reason reaches
   * the proposer, whose role may not read them all).
   */
  static String describe(JsonArray differences) {
    Map<String, int[]> counts = new LinkedHashMap<>();
    Map<String, Set<String>> columns = new LinkedHashMap<>();
    for (Object o : differences) {
      JsonObject d = (JsonObject) o;
      String group = d.getString("table") + "\u0000" + d.getString("op") + "\u0000" + d.getString("difference");
      counts.computeIfAbsent(group, g -> new int[1])[0]++;
      d.getJsonArray("columns").forEach(c -> columns.computeIfAbsent(group, g -> new LinkedHashSet<>()).add((String) c));
    }
    List<String> parts = new ArrayList<>();
    counts.forEach((group, n) -> {
      String[] g = group.split("\u0000");
      String rows = n[0] + " " + switch (g[1]) {
        case "INSERT" -> "inserted";
        case "UPDATE" -> "updated";
        case "DELETE" -> "deleted";
        default -> g[1].toLowerCase(java.util.Locale.ROOT);
      } + (n[0] == 1 ? " row" : " rows");
      String cols = columns.containsKey(group) ? " (" + String.join(", ", columns.get(group)) + ")" : "";
      parts.add(g[0] + ": " + switch (g[2]) {
        case CHANGED_SINCE -> rows + " changed since it was shown" + cols;
        case OTHER_VALUES -> rows + " would be written with other values than shown" + cols;
        case NOT_WRITTEN -> rows + " shown would no longer be written";
        default -> rows + " not shown would be written too";
      });
    });
    return parts.isEmpty() ? "its rows would be written with other values than shown" : String.join("; ", parts);
  }

  /** The rows of {@code rows} without what only tells people about them ({@code changed}). */
  private static List<JsonObject> entries(JsonArray rows) {
    List<JsonObject> out = new ArrayList<>();
    for (Object o : rows) {
      JsonObject r = ((JsonObject) o).copy();
      r.remove("changed");
      out.add(r);
    }
    return out;
  }

  /** The rows of {@code of} that no row of {@code in} equals, each row of {@code in} equal to one row at most. */
  private static List<JsonObject> unmatched(List<JsonObject> of, List<JsonObject> in) {
    Map<String, Integer> left = new LinkedHashMap<>();
    in.forEach(r -> left.merge(Canonical.json(r), 1, Integer::sum));
    List<JsonObject> out = new ArrayList<>();
    for (JsonObject r : of) {
      String text = Canonical.json(r);
      if (left.getOrDefault(text, 0) > 0) {
        left.merge(text, -1, Integer::sum);
      } else {
        out.add(r);
      }
    }
    return out;
  }

  /** Pairs rows of {@code shown} and {@code now} with the same {@code identity}, in order, and takes them out of both. */
  private static void pair(List<JsonObject> shown, List<JsonObject> now, Function<JsonObject, String> identity, JsonArray out) {
    for (Iterator<JsonObject> s = shown.iterator(); s.hasNext(); ) {
      JsonObject was = s.next();
      for (Iterator<JsonObject> n = now.iterator(); n.hasNext(); ) {
        JsonObject is = n.next();
        if (identity.apply(was).equals(identity.apply(is))) {
          List<String> since = columns(was.getJsonObject("before"), is.getJsonObject("before"));
          out.add(difference(was, since.isEmpty() ? OTHER_VALUES : CHANGED_SINCE,
              since.isEmpty() ? columns(was.getJsonObject("after"), is.getJsonObject("after")) : since));
          s.remove();
          n.remove();
          break;
        }
      }
    }
  }

  /** The columns whose value differs between two images of a row (either may be null). */
  private static List<String> columns(JsonObject a, JsonObject b) {
    Set<String> names = new LinkedHashSet<>();
    if (a != null) {
      names.addAll(a.fieldNames());
    }
    if (b != null) {
      names.addAll(b.fieldNames());
    }
    return names.stream().filter(c -> !Objects.equals(value(a, c), value(b, c))).toList();
  }

  private static String value(JsonObject image, String column) {
    return image == null || !image.containsKey(column) ? null : Canonical.json(image.getValue(column));
  }

  private static JsonObject difference(JsonObject row, String difference, List<String> columns) {
    JsonObject d = new JsonObject().put("table", row.getString("table")).put("op", row.getString("op"));
    if (row.getValue("key") != null) {
      d.put("key", row.getValue("key"));
    }
    return d.put("difference", difference).put("columns", new JsonArray(new ArrayList<>(columns)));
  }
}
