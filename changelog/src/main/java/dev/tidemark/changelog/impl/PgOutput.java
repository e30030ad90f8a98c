package dev.tidemark.changelog.impl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses the messages of PostgreSQL's {@code pgoutput} plugin, protocol version 1 (PostgreSQL's
 * "Logical Replication Message Formats"), with values in text form. Only what the decoder uses.
 */
public final class PgOutput {

  private PgOutput() {}

  /** Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch. */
  static final long PG_EPOCH_MICROS = 946_684_800_000_000L;

  public sealed interface Message permits Begin, Commit, Relation, Insert, Update, Delete, Truncate, LogicalMessage, Other {}

  /** {@code finalLsn} is the LSN of the commit record: the transaction's position. */
  public record Begin(long finalLsn, long commitMicros, int xid) implements Message {}

  public record Commit(long commitLsn, long endLsn, long commitMicros) implements Message {}

  public record Column(boolean key, String name, int typeOid) {}

  public record Relation(int relid, String schema, String name, char replicaIdentity, List<Column> columns) implements Message {}

  /** A tuple's values as text; {@link #UNCHANGED_TOAST} for a TOASTed value the row did not change, null for NULL. */
  public record Tuple(String[] values) {}

  public static final String UNCHANGED_TOAST = new String("\u0000unchanged-toast");

  public record Insert(int relid, Tuple row) implements Message {}

  /** {@code old} is the old row ('O', replica identity FULL), its key ('K'), or null. */
  public record Update(int relid, Tuple old, boolean oldIsKeyOnly, Tuple row) implements Message {}

  public record Delete(int relid, Tuple old, boolean oldIsKeyOnly) implements Message {}

  public record Truncate(List<Integer> relids) implements Message {}

  public record LogicalMessage(boolean transactional, long lsn, String prefix, String content) implements Message {}

  /** Origin, Type and anything newer: ignored. */
  public record Other(char type) implements Message {}

  public static Message parse(ByteBuffer b) {
    char type = (char) b.get();
    switch (type) {
      case 'B':
        return new Begin(b.getLong(), b.getLong(), b.getInt());
      case 'C':
        b.get();  // flags
        return new Commit(b.getLong(), b.getLong(), b.getLong());
      case 'R': {
        int relid = b.getInt();
        String schema = cstring(b);
        String name = cstring(b);
        char identity = (char) b.get();
        int n = b.getShort();
        List<Column> columns = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          boolean key = (b.get() & 1) != 0;
          String col = cstring(b);
          int typeOid = b.getInt();
          b.getInt();  // type modifier
          columns.add(new Column(key, col, typeOid));
        }
        return new Relation(relid, schema.isEmpty() ? "pg_catalog" : schema, name, identity, columns);
      }
      case 'I': {
        int relid = b.getInt();
        b.get();  // 'N'
        return new Insert(relid, tuple(b));
      }
      case 'U': {
        int relid = b.getInt();
        char kind = (char) b.get();
        Tuple old = null;
        boolean keyOnly = false;
        if (kind == 'K' || kind == 'O') {
          keyOnly = kind == 'K';
          old = tuple(b);
          kind = (char) b.get();
        }
        return new Update(relid, old, keyOnly, tuple(b));
      }
      case 'D': {
        int relid = b.getInt();
        char kind = (char) b.get();
        return new Delete(relid, tuple(b), kind == 'K');
      }
      case 'T': {
        int n = b.getInt();
        b.get();  // options: CASCADE, RESTART IDENTITY
        List<Integer> relids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          relids.add(b.getInt());
        }
        return new Truncate(relids);
      }
      case 'M': {
        boolean transactional = (b.get() & 1) != 0;
        long lsn = b.getLong();
        String prefix = cstring(b);
        int len = b.getInt();
        byte[] content = new byte[len];
        b.get(content);
        return new LogicalMessage(transactional, lsn, prefix, new String(content, StandardCharsets.UTF_8));
      }
      default:
        return new Other(type);
    }
  }

  private static Tuple tuple(ByteBuffer b) {
    int n = b.getShort();
    String[] values = new String[n];
    for (int i = 0; i < n; i++) {
      char kind = (char) b.get();
      switch (kind) {
        case 'n' -> values[i] = null;
        case 'u' -> values[i] = UNCHANGED_TOAST;
        case 't', 'b' -> {
          int len = b.getInt();
          byte[] bytes = new byte[len];
          b.get(bytes);
          values[i] = new String(bytes, StandardCharsets.UTF_8);
        }
        default -> throw new IllegalArgumentException("unknown tuple value kind " + kind);
      }
    }
    return new Tuple(values);
  }

  private static String cstring(ByteBuffer b) {
    int start = b.position();
    int end = start;
    while (b.get(end) != 0) {
      end++;
    }
    byte[] bytes = new byte[end - start];
    b.get(bytes);
    b.get();  // the terminating zero
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
