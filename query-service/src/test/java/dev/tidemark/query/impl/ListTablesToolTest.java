package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ListTablesToolTest {

  @Test
  void aPatternMatchesAnywhereWithStarAsAnyTextAndEveryOtherCharacterAsItself() {
    assertEquals("%email%", ListTablesTool.like("email"));
    assertEquals("%order%id%", ListTablesTool.like("order*id"));
    assertEquals("%%%", ListTablesTool.like("*"));
    assertEquals("%a\\_b\\%c\\\\d%", ListTablesTool.like("a_b%c\\d"), "ILIKE's own wildcards and its escape are literal");
  }
}
