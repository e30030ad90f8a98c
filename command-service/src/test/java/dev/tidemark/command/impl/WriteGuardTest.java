package dev.tidemark.command.impl;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class WriteGuardTest {

  @Test
  void transactionControlIsRecognisedBehindCommentsAndInAnyCase() {
    for (String sql : List.of("COMMIT", "begin", "Begin Transaction", "ROLLBACK TO SAVEPOINT a", "savepoint a", "release a",
        "END", "abort", "start transaction", "  -- note\n COMMIT", "/* why */ rollback;", "PREPARE TRANSACTION 'x'",
        "commit prepared 'x'")) {
      assertTrue(WriteGuard.isTransactionControl(sql), sql);
    }
  }

  @Test
  void otherStatementsAreNotTransactionControl() {
    for (String sql : List.of("SET ROLE NONE", "DELETE FROM commits", "begins", "prepare p AS SELECT 1", "DO $$ BEGIN END $$",
        "/* commit */ UPDATE t SET a = 1")) {
      assertFalse(WriteGuard.isTransactionControl(sql), sql);
    }
  }
}
