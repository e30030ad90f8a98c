package dev.tidemark.query.impl;

/** The limits every read tool applies; docs/reference/tools.md states them. */
public final class Limits {

  /** Rows on a page when the caller gives no limit. */
  public static final int DEFAULT_ROWS = 200;
  /** The most rows on one page; the input schemas refuse more (their maximum). */
  public static final int MAX_ROWS = 10_000;
  /** The most bytes of row JSON on one page; a page ends early, with truncated: true, when its rows reach it. */
  public static final int MAX_RESULT_BYTES = 4 * 1024 * 1024;
  /** How long a cursor is accepted after its first page. */
  public static final long CURSOR_TTL_MS = 24L * 60 * 60 * 1000;

  private Limits() {}
}
