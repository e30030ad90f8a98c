package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * One page of rows: at most {@code limit} rows and at most the page's byte budget of row JSON.
 * {@code more} says whether rows follow the page, so that a next cursor is due.
 */
public record Page(JsonArray rows, boolean truncated, boolean more) {

  /** The JSON bytes one row takes on a page: its encoding plus a separator. */
  static int bytesOf(JsonObject row) {
    // written as UTF-8 bytes in one pass: a String and a second pass to count its bytes cost twice that
    return row.toBuffer().length() + 1;
  }

  /**
   * Collects a page row by row, as rows arrive, so that no more than the page (and the read in
   * flight) is ever held. {@link #offer} takes a row or refuses it: a refused row is the first of
   * the next page.
   */
  public static final class Builder {
    private final int limit;
    private final int maxBytes;
    private final String bytesArgument;
    private final JsonArray rows = new JsonArray();
    private long bytes;
    private int offered;
    private int largestRow;
    private boolean refused;
    private boolean truncated;

    /** @param bytesArgument the argument that sets the budget, named when one row alone exceeds it; null when none does */
    public Builder(int limit, int maxBytes, String bytesArgument) {
      this.limit = limit;
      this.maxBytes = maxBytes;
      this.bytesArgument = bytesArgument;
    }

    /** Takes {@code row} onto the page, or refuses it when the page is full (by rows or by bytes). */
    public boolean offer(JsonObject row) {
      return offer(row, bytesOf(row));
    }

    /**
     * Ends the page before a row whose size is known, without its value, to exceed the budget
     * (PostgreSQL measured it and did not send it): the next page starts at that row, and
     * begins with LIMIT_EXCEEDED.
     */
    public boolean offerOversized(long size) {
      return offer(null, size);
    }

    private boolean offer(JsonObject row, long size) {
      offered++;
      largestRow = (int) Math.max(largestRow, Math.min(size, Integer.MAX_VALUE));
      if (refused) {
        return false;
      }
      if (rows.size() == limit) {
        refused = true;
        return false;
      }
      if (bytes + size > maxBytes) {
        if (rows.isEmpty()) {
          throw tooLarge(size);
        }
        refused = true;
        truncated = true;
        return false;
      }
      bytes += size;
      rows.add(row);
      return true;
    }

    /** Whether the page is complete: a row was refused, so it is known that more follow. */
    public boolean done() {
      return refused;
    }

    /**
     * Rows to ask the portal for next: no more than the page can still take plus the one that
     * says whether more follow, and (once a row's size is known) no more than fit the rest of
     * the budget at the size of the largest row so far.
     */
    public int nextRead() {
      int wanted = limit + 1 - offered;
      int bySize = largestRow == 0 ? Limits.FIRST_READ_ROWS
          : (int) Math.max(1, Math.min(Limits.MAX_READ_ROWS, (maxBytes - bytes) / largestRow + 1));
      return Math.max(1, Math.min(wanted, bySize));
    }

    public int size() {
      return rows.size();
    }

    public Page build() {
      return new Page(rows, truncated, refused);
    }

    private ToolException tooLarge(long size) {
      JsonObject details = new JsonObject().put("row_bytes", size).put("limit_bytes", maxBytes);
      if (bytesArgument != null) {
        details.put("argument", bytesArgument);
      }
      String what = "A row takes about " + size + " bytes of JSON, more than ";
      if (bytesArgument != null && size <= Limits.MAX_RESULT_BYTES) {
        return new ToolException(ErrorCode.LIMIT_EXCEEDED, what + bytesArgument + " (" + maxBytes + "): pass " + bytesArgument
            + " up to " + Limits.MAX_RESULT_BYTES + ", or select fewer or smaller columns.", details);
      }
      return new ToolException(ErrorCode.LIMIT_EXCEEDED, what + "a page may hold (" + Limits.MAX_RESULT_BYTES
          + " bytes): select fewer or smaller columns, for example left(column, 10000) or length(column) instead of the value.", details);
    }
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

  /** The summary line; it carries {@code nextCursor} itself, since a host may show the model only the text. */
  public String describe(String what, String nextCursor) {
    String pass = "pass cursor " + nextCursor;
    return rows.size() + (rows.size() == 1 ? " row" : " rows") + what
        + (more && nextCursor != null ? (truncated ? "; the page reached its byte budget (max_bytes), more follow: " + pass
            : "; more follow: " + pass) : "; last page");
  }
}
