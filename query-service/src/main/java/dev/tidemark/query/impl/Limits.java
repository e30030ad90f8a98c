package dev.tidemark.query.impl;

/** The limits every read tool applies; docs/reference/tools.md states them. */
public final class Limits {

  /** Rows on a page when the caller gives no limit. */
  public static final int DEFAULT_ROWS = 200;
  /** The most rows on one page; the input schemas refuse more (their maximum). */
  public static final int MAX_ROWS = 10_000;
  /**
   * Bytes of row JSON on a page when the caller gives no max_bytes: about 25,000 tokens, a page a
   * model's context holds with room to spare. A page ends early, with truncated: true, when its rows reach it.
   */
  public static final int DEFAULT_RESULT_BYTES = 100_000;
  /** The most bytes of row JSON a caller may ask for with max_bytes; the input schemas refuse more. */
  public static final int MAX_RESULT_BYTES = 4 * 1024 * 1024;
  /**
   * Rows in the first read from a portal, before any row's size is known: what a call holds in
   * memory beyond its page is at most one read, so the first one is small; later reads are sized
   * from the largest row seen, to fit what is left of the page's budget.
   */
  public static final int FIRST_READ_ROWS = 50;
  /** The most rows in one read from a portal. */
  public static final int MAX_READ_ROWS = 1_000;
  /** How long a cursor is accepted after its first page. */
  public static final long CURSOR_TTL_MS = 24L * 60 * 60 * 1000;

  private Limits() {}

  /** The page budget the caller asked for, or the default. */
  public static int resultBytes(io.vertx.core.json.JsonObject args) {
    Integer asked = args.getInteger("max_bytes");
    return asked == null ? DEFAULT_RESULT_BYTES : Math.min(asked, MAX_RESULT_BYTES);
  }
}
