package dev.tidemark.gateway.impl.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GetStreamTest {

  @Test
  void aLastEventIdIsTheNumberTheClientSent() {
    assertEquals(17, GetStream.lastEventId("17"));
    assertEquals(17, GetStream.lastEventId(" 17 "));
  }

  @Test
  void noLastEventIdOrOneThatIsNotANumberReplaysNothing() {
    assertEquals(-1, GetStream.lastEventId(null));
    assertEquals(-1, GetStream.lastEventId("abc"));
    assertEquals(-1, GetStream.lastEventId(""));
  }
}
