package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.gateway.impl.http.AnswerWriter.Fate;
import org.junit.jupiter.api.Test;

class AnswerWriterTest {

  @Test
  void aRefusalOnAnAuthenticatedConnectionWhoseBodyWasReadKeepsTheConnection() {
    assertEquals(Fate.KEEP, AnswerWriter.fate(400, true, false, true));
  }

  @Test
  void aRefusalBeforeTheBodyWasReadAsksTheClientToClose() {
    assertEquals(Fate.ASK_TO_CLOSE, AnswerWriter.fate(413, false, false, true));
  }

  @Test
  void anyRefusalOnAConnectionThatNeverAuthenticatedClosesIt() {
    assertEquals(Fate.CLOSE, AnswerWriter.fate(403, true, false, false));
    assertEquals(Fate.CLOSE, AnswerWriter.fate(415, false, false, false));
  }

  @Test
  void anAnswerThatAskedForCloseClosesWhateverItsStatus() {
    assertEquals(Fate.CLOSE, AnswerWriter.fate(401, true, true, true));
    assertEquals(Fate.CLOSE, AnswerWriter.fate(200, true, true, true));
  }

  @Test
  void aSuccessLeavesTheConnectionAloneEvenUnauthenticatedOrUnread() {
    assertEquals(Fate.KEEP, AnswerWriter.fate(202, true, false, false));
    assertEquals(Fate.KEEP, AnswerWriter.fate(200, false, false, true));
  }
}
