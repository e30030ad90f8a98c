package dev.tidemark.gateway.impl.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class ReplayWindowTest {

  @Test
  void theOldestEventGoesOnceTheCountIsReached() {
    ReplayWindow window = new ReplayWindow(3, 1_000);
    assertEquals(List.of(), window.keep(1, 10));
    assertEquals(List.of(), window.keep(2, 10));
    assertEquals(List.of(), window.keep(3, 10));
    assertEquals(List.of(1L), window.keep(4, 10));
  }

  @Test
  void theOldestEventsGoOnceTheBytesAreOverTheBudgetButTheNewestStays() {
    ReplayWindow window = new ReplayWindow(100, 100);
    window.keep(1, 40);
    window.keep(2, 40);
    assertEquals(List.of(1L), window.keep(3, 40));
    assertEquals(List.of(2L, 3L), window.keep(4, 500), "an event over the budget alone is still kept");
    assertEquals(List.of(4L), window.keep(5, 1));
  }
}
