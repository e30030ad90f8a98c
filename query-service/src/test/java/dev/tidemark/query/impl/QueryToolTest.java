package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** How {@code query} writes a column's type from the PostgreSQL client's name of it. */
class QueryToolTest {

  @Test
  void theClientsNamesAreWrittenAsPostgreSQLWritesThem() {
    assertEquals("int8", QueryTool.clientTypeName("INT8"));
    assertEquals("int4[]", QueryTool.clientTypeName("INT4_ARRAY"));
    assertEquals("timestamptz[]", QueryTool.clientTypeName("TIMESTAMPTZ_ARRAY"));
  }

  @Test
  void aTypeTheClientDoesNotKnowIsLeftForPostgreSQLToName() {
    assertNull(QueryTool.clientTypeName("UNKNOWN"));
    assertNull(QueryTool.clientTypeName("UNKNOWN_ARRAY"));
    assertNull(QueryTool.clientTypeName(null));
  }
}
