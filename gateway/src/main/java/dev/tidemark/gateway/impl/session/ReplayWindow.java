package dev.tidemark.gateway.impl.session;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * What one stream keeps for replay, as its only writer sees it: the newest events up to a count and
 * a byte budget, the oldest going first. Each event costs O(1): the window only remembers each
 * kept event's seq and size.
 */
final class ReplayWindow {

  private final int maxEvents;
  private final long maxBytes;
  private final ArrayDeque<long[]> kept = new ArrayDeque<>();
  private long bytes;

  ReplayWindow(int maxEvents, long maxBytes) {
    this.maxEvents = maxEvents;
    this.maxBytes = maxBytes;
  }

  /** Keeps event {@code seq} of {@code size} bytes; returns the seqs that no longer fit, oldest first. */
  List<Long> keep(long seq, int size) {
    kept.addLast(new long[] {seq, size});
    bytes += size;
    List<Long> evicted = new ArrayList<>(1);
    // the newest event stays even when it alone is over the budget
    while (kept.size() > maxEvents || (bytes > maxBytes && kept.size() > 1)) {
      long[] oldest = kept.removeFirst();
      bytes -= oldest[1];
      evicted.add(oldest[0]);
    }
    return evicted;
  }
}
