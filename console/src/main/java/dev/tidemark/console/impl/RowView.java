package dev.tidemark.console.impl;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * One row change as people are shown it: every column with its value before and after, the columns
 * whose value changes marked. Values are text on the page, whatever they hold (a value that looks
 * like markup is shown as those characters).
 */
final class RowView {

  private RowView() {}

  /** {@code change}: table (or schema and table), op, key, before, after, and optionally changed (the columns that change). */
  static Html of(JsonObject change) {
    String table = change.getString("schema") != null ? change.getString("schema") + "." + change.getString("table") : change.getString("table");
    JsonObject before = change.getValue("before") instanceof JsonObject b ? b : null;
    JsonObject after = change.getValue("after") instanceof JsonObject a ? a : null;
    Set<String> columns = new LinkedHashSet<>();
    if (before != null) {
      columns.addAll(before.fieldNames());
    }
    if (after != null) {
      columns.addAll(after.fieldNames());
    }
    Set<String> changed = new LinkedHashSet<>();
    if (change.getValue("changed") instanceof JsonArray given) {
      given.forEach(c -> changed.add(String.valueOf(c)));
    } else {
      for (String c : columns) {
        if (before == null || after == null || !Objects.equals(before.getValue(c), after.getValue(c))) {
          changed.add(c);
        }
      }
    }
    Html h = new Html().open("table", "class", "row", "data-table", table, "data-op", change.getString("op"));
    h.open("caption").el("span", table, "class", "table").text(" ").el("span", change.getString("op"), "class", "op");
    if (change.getValue("key") != null) {
      h.text(" key ").el("code", value(change.getValue("key")));
    }
    h.close("caption");
    h.open("thead").open("tr").el("th", "column").el("th", "before").el("th", "after").close("tr").close("thead").open("tbody");
    for (String c : columns) {
      boolean marked = changed.contains(c);
      h.open("tr", "class", marked ? "changed" : null, "data-column", c);
      h.open("th").text(c);
      if (marked) {
        h.text(" ").el("span", "changed", "class", "mark");
      }
      h.close("th");
      cell(h, before, c);
      cell(h, after, c);
      h.close("tr");
    }
    return h.close("tbody").close("table");
  }

  private static void cell(Html h, JsonObject image, String column) {
    if (image == null) {
      h.el("td", "—", "class", "none");
    } else if (image.getValue(column) == null) {
      h.el("td", "NULL", "class", "null");
    } else {
      h.el("td", value(image.getValue(column)));
    }
  }

  /** A JSON value as text: a string as itself, anything else as JSON. */
  static String value(Object v) {
    if (v instanceof String s) {
      return s;
    }
    if (v instanceof JsonObject o) {
      return o.encode();
    }
    if (v instanceof JsonArray a) {
      return a.encode();
    }
    return String.valueOf(v);
  }
}
