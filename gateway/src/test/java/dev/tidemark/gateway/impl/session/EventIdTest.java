package dev.tidemark.gateway.impl.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class EventIdTest {

  @Test
  void anIdNamesItsStreamAndItsPlaceInIt() {
    String post = EventId.newPostStream();
    EventId id = EventId.parse(post + "-17");
    assertEquals(new EventId(post, 17), id);
    assertEquals(post + "-17", id.toString());
    assertFalse(id.onGetStream());
    assertTrue(EventId.parse(" g-1764600000000000 ").onGetStream());
  }

  @Test
  void everyPostStreamHasANameOfItsOwn() {
    assertNotEquals(EventId.newPostStream(), EventId.newPostStream());
  }

  @Test
  void anIdThisServerNeverIssuesIsNoId() {
    for (String header : new String[] {null, "", "17", "-1", "g", "g-", "g--1", "g-x", "x-1", "p12-3", "pzzzzzzzzzzzzzzzz-1",
        "g-99999999999999999999", "g-9223372036854775807", "p0123456789abcdef-1-2"}) {
      assertNull(EventId.parse(header), header);
    }
  }
}
