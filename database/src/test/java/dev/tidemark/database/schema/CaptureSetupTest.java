package dev.tidemark.database.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CaptureSetupTest {

  private static CaptureSetup.Settings ok() {
    return new CaptureSetup.Settings("logical", 10, 10, 1, 0, true, "tidemark", false, false);
  }

  @Test
  void aServerThatCanDecodeHasNoProblem() {
    assertEquals(List.of(), CaptureSetup.problems(ok()));
  }

  @Test
  void eachMissingSettingIsNamedWithHowToSetIt() {
    List<String> problems = CaptureSetup.problems(new CaptureSetup.Settings("replica", 2, 0, 2, 0, false, "app", false, false));
    assertEquals(4, problems.size(), problems::toString);
    assertTrue(problems.get(0).startsWith("wal_level is 'replica'") && problems.get(0).contains("ALTER SYSTEM SET wal_level = logical"));
    assertTrue(problems.get(1).startsWith("max_replication_slots is 2") && problems.get(1).contains("ALTER SYSTEM SET max_replication_slots"));
    assertTrue(problems.get(2).startsWith("max_wal_senders is 0") && problems.get(2).contains("ALTER SYSTEM SET max_wal_senders"));
    assertTrue(problems.get(3).contains("app") && problems.get(3).contains("ALTER ROLE app REPLICATION"));
  }

  @Test
  void allSlotsInUseIsNoProblemWhenOneOfThemIsTidemarks() {
    assertEquals(List.of(), CaptureSetup.problems(new CaptureSetup.Settings("logical", 3, 10, 3, 1, true, "t", true, true)));
  }
}
