package dev.tidemark.changelog.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SlotReaderTest {

  private static final long EPOCH = 1L << 32;

  @Test
  void aTransactionIdIsWidenedIntoTheEpochOfTheIdReadNearIt() {
    assertEquals(5 * EPOCH + 1_000, SlotReader.widen(5 * EPOCH + 2_000, 1_000));
    assertEquals(5 * EPOCH + 3_000, SlotReader.widen(5 * EPOCH + 2_000, 3_000));
  }

  @Test
  void aTransactionIdFromBeforeTheEpochTurnedBelongsToTheEpochBefore() {
    // read just after the epoch turned; the transaction began just before it
    assertEquals(6 * EPOCH - 10, SlotReader.widen(6 * EPOCH + 5, (int) (EPOCH - 10)));
  }

  @Test
  void aTransactionIdFromAfterTheEpochTurnedBelongsToTheEpochAfter() {
    // read just before the epoch turned (up to a second earlier); the transaction began just after it
    assertEquals(6 * EPOCH + 7, SlotReader.widen(6 * EPOCH - 5, 7));
  }
}
