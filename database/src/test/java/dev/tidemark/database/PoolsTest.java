package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PoolsTest {

  @Test
  void aStatementWhoseResultIsAStarOverATableIsNotKeptPrepared() {
    assertTrue(Pools.STAR_RESULT.matcher("SELECT * FROM tidemark.changelog").find());
    assertTrue(Pools.STAR_RESULT.matcher("select r.*, n.relid FROM r JOIN n USING (x)").find());
    assertFalse(Pools.STAR_RESULT.matcher("SELECT count(*) FROM tidemark.changelog WHERE a = $1").find());
    assertFalse(Pools.STAR_RESULT.matcher("SELECT k.input_hash, k.outcome FROM tidemark.idempotency k WHERE k.key = $1").find());
  }
}
