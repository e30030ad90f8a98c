package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One page of rows: at most {@code limit} rows and at most {@link Limits#MAX_RESULT_BYTES} of row
 * JSON. {@code more} says whether rows follow the page, so that a next cursor is due.
 */
public record Page(JsonArray rows, boolean truncated, boolean more) {

  /** The page from {@code fetched}, which holds up to limit + 1 rows: the extra one only says that more follow. */
  public static Page of(List<JsonObject> fetched, int limit) {
    JsonArray rows = new JsonArray();
    long bytes = 0;
    for (JsonObject row : fetched) {
      if (rows.size() == limit) {
        return new Page(rows, false, true);
      }
      int size = row.encode().getBytes(StandardCharsets.UTF_8).length + 1;
      if (bytes + size > Limits.MAX_RESULT_BYTES) {
        if (rows.isEmpty()) {
          throw new ToolException(ErrorCode.LIMIT_EXCEEDED, "A single row is larger than the result cap of "
              + Limits.MAX_RESULT_BYTES + " bytes; select fewer or smaller columns.", new JsonObject().put("limit_bytes", Limits.MAX_RESULT_BYTES));
        }
        return new Page(rows, true, true);
      }
      bytes += size;
      rows.add(row);
    }
    return new Page(rows, false, false);
  }

  /** Adds rows, next_cursor and truncated to {@code out}. */
  public JsonObject into(JsonObject out, String nextCursor) {
    out.put("rows", rows);
    if (truncated) {
      out.put("truncated", true);
    }
    if (more && nextCursor != null) {
      out.put("next_cursor", nextCursor);
    }
    return out;
  }

  public String describe(String what) {
    return rows.size() + (rows.size() == 1 ? " row" : " rows") + what
        + (more ? (truncated ? "; the page reached the size cap, more follow: pass next_cursor as cursor" : "; more follow: pass next_cursor as cursor")
            : "; last page");
  }
}
