package dev.tidemark.query.impl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pure part of {@code watch}: which logged changes one patch takes (whole transactions only),
 * the net effect of those changes per key, and the set of keys shown under row-level security.
 */
final class WatchPatch {

  private WatchPatch() {}

  /** One logged change of the watched table, in position order; texts are the captured jsonb as text. */
  record Change(long position, long id, String xid, String op, String key, String before, String after) {}

  /**
   * The changes of one patch: a prefix of the page that ends at a transaction boundary. When the
   * page was full its last transaction may go on past it and is left for the next call.
   *
   * @param taken the changes to apply; empty with {@code more} when one transaction alone is larger than a page
   * @param more changes wait after {@code taken}
   * @param nextPosition the commit position of the first change left out, when {@code more}
   */
  record Cut(List<Change> taken, boolean more, long nextPosition) {}

  /** @param full the page held as many changes as were asked for, so more may follow */
  static Cut cut(List<Change> page, boolean full) {
    if (!full || page.isEmpty()) {
      return new Cut(page, false, 0);
    }
    String lastXid = page.get(page.size() - 1).xid();
    int end = page.size();
    while (end > 0 && page.get(end - 1).xid().equals(lastXid)) {
      end--;
    }
    return new Cut(page.subList(0, end), true, page.get(end).position());
  }

  /**
   * An UPDATE that changed the row's key ({@code oldKey}, from its before-image, differs from its
   * key) as what a watcher sees: the old key deleted and the new one inserted, so that the row
   * held under the old key goes.
   */
  static List<Change> split(Change c, String oldKey) {
    if (oldKey == null || c.key() == null || oldKey.equals(c.key())) {
      return List.of(c);
    }
    return List.of(new Change(c.position(), c.id(), c.xid(), "DELETE", oldKey, c.before(), null),
        new Change(c.position(), c.id(), c.xid(), "INSERT", c.key(), null, c.after()));
  }

  /** Whether the changes hold a truncation, which no per-key patch can express. */
  static boolean truncates(List<Change> changes) {
    return changes.stream().anyMatch(c -> "TRUNCATE".equals(c.op()));
  }

  /**
   * What the changes left of one key: its final image ({@code null} once deleted), and every image
   * it had in the range (the first before-image and each after-image), to learn whether the row was
   * ever inside the filter. {@code order} is the position of its last change. {@code beforeUnknown}:
   * its first change updated or deleted it while its table recorded only the key of old rows
   * (database.key-only-tables), so whether it was inside the filter before the range is not known.
   */
  record Net(String key, String finalImage, List<String> images, int order, boolean beforeUnknown) {

    boolean deleted() {
      return finalImage == null;
    }
  }

  /** The net effect per key, ordered by each key's last change; {@code keyColumns} are the table's primary key. */
  static List<Net> net(List<Change> changes, List<String> keyColumns) {
    Map<String, List<String>> images = new LinkedHashMap<>();
    java.util.Set<String> unknown = new java.util.HashSet<>();
    Map<String, String> last = new LinkedHashMap<>();
    Map<String, Integer> order = new LinkedHashMap<>();
    for (int i = 0; i < changes.size(); i++) {
      Change c = changes.get(i);
      if (c.key() == null) {
        continue;
      }
      boolean first = !images.containsKey(c.key());
      List<String> seen = images.computeIfAbsent(c.key(), k -> new ArrayList<>());
      if (first && keyOnly(c, keyColumns)) {
        unknown.add(c.key());
      } else if (first && c.before() != null) {
        seen.add(c.before());
      }
      if (c.after() != null) {
        seen.add(c.after());
      }
      last.put(c.key(), "DELETE".equals(c.op()) ? null : c.after());
      order.put(c.key(), i);
    }
    List<Net> out = new ArrayList<>();
    for (Map.Entry<String, List<String>> e : images.entrySet()) {
      out.add(new Net(e.getKey(), last.get(e.getKey()), List.copyOf(e.getValue()), order.get(e.getKey()), unknown.contains(e.getKey())));
    }
    out.sort((a, b) -> Integer.compare(a.order(), b.order()));
    return out;
  }

  /**
   * Whether an UPDATE or DELETE carries no old row beyond its key: no before-image, or one of key
   * columns alone. A table whose every column is in its key is taken as such too, which costs at
   * most a delete of a key the watcher may not hold.
   */
  private static boolean keyOnly(Change c, List<String> keyColumns) {
    if (!"UPDATE".equals(c.op()) && !"DELETE".equals(c.op())) {
      return false;
    }
    return c.before() == null || keyColumns.containsAll(new io.vertx.core.json.JsonObject(c.before()).fieldNames());
  }

  /**
   * The keys a caller was shown, as 64-bit fingerprints of each key's JSON text, kept sorted so
   * that the set travels in a cursor as a short base64 string.
   */
  static final class ShownKeys {

    private long[] keys;

    private ShownKeys(long[] sorted) {
      this.keys = sorted;
    }

    static ShownKeys of(List<String> keyTexts) {
      ShownKeys s = new ShownKeys(new long[0]);
      keyTexts.forEach(s::add);
      return s;
    }

    static ShownKeys decode(String encoded) {
      if (encoded == null || encoded.isEmpty()) {
        return new ShownKeys(new long[0]);
      }
      ByteBuffer b = ByteBuffer.wrap(Base64.getUrlDecoder().decode(encoded));
      long[] k = new long[b.remaining() / Long.BYTES];
      for (int i = 0; i < k.length; i++) {
        k[i] = b.getLong();
      }
      Arrays.sort(k);
      return new ShownKeys(k);
    }

    String encode() {
      ByteBuffer b = ByteBuffer.allocate(keys.length * Long.BYTES);
      for (long k : keys) {
        b.putLong(k);
      }
      return Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
    }

    int size() {
      return keys.length;
    }

    boolean contains(String keyText) {
      return Arrays.binarySearch(keys, fingerprint(keyText)) >= 0;
    }

    void add(String keyText) {
      long f = fingerprint(keyText);
      int at = Arrays.binarySearch(keys, f);
      if (at < 0) {
        long[] next = new long[keys.length + 1];
        int i = -at - 1;
        System.arraycopy(keys, 0, next, 0, i);
        next[i] = f;
        System.arraycopy(keys, i, next, i + 1, keys.length - i);
        keys = next;
      }
    }

    void remove(String keyText) {
      int at = Arrays.binarySearch(keys, fingerprint(keyText));
      if (at >= 0) {
        long[] next = new long[keys.length - 1];
        System.arraycopy(keys, 0, next, 0, at);
        System.arraycopy(keys, at + 1, next, at, keys.length - at - 1);
        keys = next;
      }
    }

    private static long fingerprint(String keyText) {
      try {
        byte[] d = MessageDigest.getInstance("SHA-256").digest(keyText.getBytes(StandardCharsets.UTF_8));
        return ByteBuffer.wrap(d).getLong();
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
