package dev.tidemark.query.impl;

import dev.tidemark.database.PgJson;
import io.vertx.core.Future;
import io.vertx.sqlclient.Cursor;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.desc.ColumnDescriptor;
import java.util.List;
import java.util.function.Predicate;

/**
 * Reading a portal a few rows at a time. A read of n rows holds all n in memory until it is done,
 * and PostgreSQL sends each row whole, so what a call holds is its page plus one read: each read
 * asks for no more rows than the rest of the page's byte budget holds at the size of the largest
 * row seen so far. See docs/performance.md.
 */
final class Portals {

  /** The most rows one read of rows to skip asks for. */
  private static final int MAX_SKIP_ROWS = 10_000;

  private Portals() {}

  /**
   * Reads {@code portal} into {@code page} through {@code offer} (which converts a row and offers
   * it, and returns false when the page refused it) until the page is done or the portal has no
   * more rows; then closes the portal. Completes with the result's columns.
   */
  static Future<List<ColumnDescriptor>> fill(Cursor portal, Page.Builder page, Predicate<Row> offer) {
    return portal.read(page.nextRead()).compose(rows -> {
      List<ColumnDescriptor> columns = rows.columnDescriptors();
      return take(portal, page, offer, rows).map(v -> columns);
    });
  }

  private static Future<Void> take(Cursor portal, Page.Builder page, Predicate<Row> offer, RowSet<Row> rows) {
    for (Row r : rows) {
      if (!offer.test(r)) {
        break;
      }
    }
    if (page.done() || !portal.hasMore()) {
      return portal.close();
    }
    return portal.read(page.nextRead()).compose(next -> take(portal, page, offer, next));
  }

  /**
   * Reads and drops {@code n} rows (the portal has no other way to move), each read sized as
   * {@link #fill} sizes them against {@code maxBytes}.
   */
  static Future<Void> skip(Cursor portal, long n, int maxBytes) {
    return skip(portal, n, maxBytes, Limits.FIRST_READ_ROWS);
  }

  private static Future<Void> skip(Cursor portal, long n, int maxBytes, int perRead) {
    if (n <= 0) {
      return Future.succeededFuture();
    }
    int chunk = (int) Math.min(n, perRead);
    return portal.read(chunk).compose(rows -> {
      if (rows.size() < chunk || !portal.hasMore()) {
        return Future.<Void>succeededFuture();
      }
      int largest = 1;
      for (Row r : rows) {
        largest = Math.max(largest, Page.bytesOf(PgJson.row(r)));
      }
      return skip(portal, n - chunk, maxBytes, (int) Math.max(1, Math.min(MAX_SKIP_ROWS, maxBytes / largest + 1)));
    });
  }
}
