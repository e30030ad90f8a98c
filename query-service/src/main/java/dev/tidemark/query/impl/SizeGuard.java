package dev.tidemark.query.impl;

import dev.tidemark.database.SqlText;
import dev.tidemark.database.TableCatalog.Column;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Keeps PostgreSQL from sending a row too large for a page, in the statements Tidemark writes
 * ({@code list_rows}, {@code get_row}). PostgreSQL sends a row as one message and the client holds
 * the whole message before it decodes any of it, so a 500 MB value would be in memory before any
 * check on our side could run. Instead PostgreSQL measures each row (the bytes of its values in
 * text form, which the JSON is at least as large as) and sends NULLs in place of the values of a
 * row over the budget, with its size; the page then ends before that row, or refuses it.
 * Measuring text, varchar, char and bytea reads only the stored length; other types of variable
 * length are measured by their text form. Fixed-size types are not measured.
 */
final class SizeGuard {

  /** The output column with the row's measured size. */
  static final String SIZE_COLUMN = "_tidemark_n";
  private static final String ALIAS = "_tidemark_size";
  private static final String FITS = "_tidemark_fits";
  private static final Set<String> LENGTH_KNOWN = Set.of("text", "character varying", "character", "bytea");
  /** Type categories of fixed or small size: boolean, date/time, numeric, network, enum. */
  private static final Set<String> SMALL = Set.of("B", "D", "N", "T", "I", "E");

  private SizeGuard() {}

  static boolean measured(Column c) {
    return !SMALL.contains(c.category()) && !"uuid".equals(c.castType());
  }

  /** {@code expr} (a value of column {@code c}), or NULL in a row over the budget. */
  static String guard(Column c, String expr) {
    return measured(c) ? "CASE WHEN " + ALIAS + "." + FITS + " THEN " + expr + " END" : expr;
  }

  /** The select item with the row's size. */
  static String sizeItem() {
    return ALIAS + "." + SIZE_COLUMN;
  }

  /**
   * What follows the table in FROM: the row's size, computed once per row, and whether it fits
   * {@code capParam} (a placeholder of the budget, always referenced, so that its type is known).
   */
  static String lateral(List<Column> columns, String capParam) {
    List<String> parts = new ArrayList<>();
    for (Column c : columns) {
      if (measured(c)) {
        String col = SqlText.quoteIdent(c.name());
        parts.add("COALESCE(octet_length(" + (LENGTH_KNOWN.contains(c.castType()) ? col : col + "::text") + "), 0)");
      }
    }
    String sum = parts.isEmpty() ? "0" : String.join(" + ", parts);
    return " CROSS JOIN LATERAL (SELECT s AS " + SIZE_COLUMN + ", s <= " + capParam + "::int8 AS " + FITS
        + " FROM (SELECT (" + sum + ")::int8 AS s) AS _tidemark_s) AS " + ALIAS;
  }
}
