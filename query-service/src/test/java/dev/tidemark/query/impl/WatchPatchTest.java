package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.query.impl.WatchPatch.Change;
import dev.tidemark.query.impl.WatchPatch.Cut;
import dev.tidemark.query.impl.WatchPatch.Net;
import dev.tidemark.query.impl.WatchPatch.ShownKeys;
import java.util.List;
import org.junit.jupiter.api.Test;

class WatchPatchTest {

  private static Change change(long position, long id, String xid, String op, String key, String before, String after) {
    return new Change(position, id, xid, op, key, before, after);
  }

  @Test
  void aFullPageEndsBeforeItsLastTransactionWhichMayGoOn() {
    List<Change> page = List.of(change(10, 1, "1", "INSERT", "a", null, "{}"), change(20, 2, "2", "INSERT", "b", null, "{}"),
        change(20, 3, "2", "INSERT", "c", null, "{}"));
    Cut cut = WatchPatch.cut(page, true);
    assertEquals(1, cut.taken().size());
    assertTrue(cut.more());
    assertEquals(20, cut.nextPosition());
    Cut whole = WatchPatch.cut(page, false);
    assertEquals(3, whole.taken().size());
    assertFalse(whole.more());
  }

  @Test
  void oneTransactionLargerThanAPageTakesNothing() {
    List<Change> page = List.of(change(10, 1, "1", "INSERT", "a", null, "{}"), change(10, 2, "1", "INSERT", "b", null, "{}"));
    Cut cut = WatchPatch.cut(page, true);
    assertTrue(cut.taken().isEmpty());
    assertTrue(cut.more());
    assertEquals(10, cut.nextPosition());
  }

  @Test
  void theNetEffectPerKeyIsItsLastStateOrderedByItsLastChange() {
    List<Net> net = WatchPatch.net(List.of(
        change(1, 1, "1", "INSERT", "a", null, "{\"v\":1}"),
        change(2, 2, "2", "UPDATE", "b", "{\"v\":5}", "{\"v\":6}"),
        change(3, 3, "3", "UPDATE", "a", "{\"v\":1}", "{\"v\":2}"),
        change(4, 4, "4", "DELETE", "b", "{\"v\":6}", null)), List.of("id"));
    assertEquals(List.of("a", "b"), net.stream().map(Net::key).toList());
    assertEquals("{\"v\":2}", net.get(0).finalImage());
    assertEquals(List.of("{\"v\":1}", "{\"v\":2}"), net.get(0).images());
    assertTrue(net.get(1).deleted());
    assertNull(net.get(1).finalImage());
    assertEquals(List.of("{\"v\":5}", "{\"v\":6}"), net.get(1).images(), "the state before the range, then each after-image");
  }

  @Test
  void aRowWhoseFirstChangeKeptOnlyItsKeyMayHaveBeenInsideTheFilter() {
    List<Net> net = WatchPatch.net(List.of(
        change(1, 1, "1", "UPDATE", "[1]", null, "{\"id\":1,\"v\":2}"),
        change(2, 2, "2", "DELETE", "[2]", "{\"id\":2}", null),
        change(3, 3, "3", "UPDATE", "[3]", "{\"id\":3,\"v\":5}", "{\"id\":3,\"v\":6}"),
        change(4, 4, "4", "INSERT", "[4]", null, "{\"id\":4,\"v\":1}"),
        change(5, 5, "5", "UPDATE", "[4]", null, "{\"id\":4,\"v\":2}")), List.of("id"));
    assertEquals(List.of(true, true, false, false), net.stream().map(Net::beforeUnknown).toList());
    assertEquals(List.of("{\"id\":1,\"v\":2}"), net.get(0).images(), "no image stands for the unknown old row");
    assertEquals(List.of(), net.get(1).images());
    assertEquals(List.of("{\"id\":3,\"v\":5}", "{\"id\":3,\"v\":6}"), net.get(2).images());
    assertEquals(List.of("{\"id\":4,\"v\":1}", "{\"id\":4,\"v\":2}"), net.get(3).images(), "inserted in the range: known");
  }

  @Test
  void anUpdateThatChangedTheKeyDeletesTheOldKeyAndInsertsTheNew() {
    Change moved = change(1, 1, "1", "UPDATE", "{\"id\": 60}", "{\"id\":6,\"v\":1}", "{\"id\":60,\"v\":1}");
    assertEquals(List.of(change(1, 1, "1", "DELETE", "{\"id\": 6}", "{\"id\":6,\"v\":1}", null),
        change(1, 1, "1", "INSERT", "{\"id\": 60}", null, "{\"id\":60,\"v\":1}")), WatchPatch.split(moved, "{\"id\": 6}"));
    assertEquals(List.of(moved), WatchPatch.split(moved, "{\"id\": 60}"), "the same key: one change");
    assertEquals(List.of(moved), WatchPatch.split(moved, null), "no old key known");
  }

  @Test
  void aTruncationIsSeen() {
    assertTrue(WatchPatch.truncates(List.of(change(1, 1, "1", "TRUNCATE", null, null, null))));
    assertFalse(WatchPatch.truncates(List.of(change(1, 1, "1", "INSERT", "a", null, "{}"))));
  }

  @Test
  void shownKeysSurviveTheirEncodingAndForgetRemovedKeys() {
    ShownKeys keys = ShownKeys.of(List.of("[1]", "[2]", "[3]"));
    keys.remove("[2]");
    keys.add("[4]");
    keys.add("[4]");
    ShownKeys back = ShownKeys.decode(keys.encode());
    assertEquals(3, back.size());
    assertTrue(back.contains("[1]") && back.contains("[3]") && back.contains("[4]"));
    assertFalse(back.contains("[2]"));
    assertEquals(0, ShownKeys.decode("").size());
  }

  @Test
  void whatASnapshotDidNotSeeIsItsXmaxThenItsTransactionsInProgress() {
    assertEquals(List.of("14", "10", "12"), WatchTool.unseen("9:14:10,12"));
    assertEquals(List.of("9"), WatchTool.unseen("9:9:"));
    assertEquals(List.of(), WatchTool.unseen(null));
  }
}
