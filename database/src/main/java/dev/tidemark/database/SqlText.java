package dev.tidemark.database;

/** SQL text that Tidemark builds itself: quoted names. A caller's values are always bound, never spliced. */
public final class SqlText {

  private SqlText() {}

  /** A SQL string literal of {@code text}, for text Tidemark itself built (quoted identifiers), never for a caller's value. */
  public static String quoteLiteralText(String text) {
    return "'" + text.replace("'", "''") + "'";
  }

  /** Double-quotes an identifier so that any name, even an odd one, is taken literally. */
  public static String quoteIdent(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }
}
