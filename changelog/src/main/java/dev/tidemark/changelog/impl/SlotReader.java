package dev.tidemark.changelog.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only consumer of the database's replication slot, on a thread of its own (PgJDBC's
 * replication API blocks). It decodes pgoutput in commit order and stores each change in
 * {@code tidemark.changelog} of the changelog's database (database.changelog-url, or the served
 * one), its transaction's commit LSN as the position, then confirms the slot up to what it stored;
 * the {@link Relay} publishes the table to Kafka. What it needs of the served database (the slot,
 * the key ring, a table's key columns) it reads on a connection of its own there, so that with a
 * store elsewhere the served database's server does nothing for the changelog but decode.
 *
 * <p>Holding the slot is the tenure: PostgreSQL lets one connection stream a slot at a time, so the
 * node whose reader streams it is the one publisher. Memory is bounded: a transaction's changes are
 * stored {@code batchSize} at a time, so a million-row transaction never sits in memory; a reader
 * that restarts skips what was stored (whole transactions by their commit LSN, and the stored part
 * of the last one by count), so nothing is stored twice.
 */
public final class SlotReader implements Runnable {

  private static final Logger LOG = LoggerFactory.getLogger(SlotReader.class);
  static final long KEYS_REFRESH_MS = 10_000;
  /**
   * The longest a decoded change waits for others to share its store transaction: a store is one
   * round trip, so at most 200 a second under a steady stream, while a change reaches Kafka a few
   * milliseconds after its commit (docs/performance.md, "Changelog").
   */
  static final long STORE_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  /** A stream quiet this long has nothing more to share the store with. */
  static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** Told, on the reader's thread, when its tenure starts, when it stored changes, and when the tenure ends. */
  public interface Listener {
    void tenureStarted();

    void stored();

    void tenureEnded(Throwable cause);
  }

  /**
   * One store: the commits, their changes, their verified attributions and the decoded position, as
   * one statement in a transaction of its own (one round trip), so that storing often, which keeps
   * a change's way to Kafka short, costs the database little. The relay is woken at its commit.
   */
  private static final String STORE = """
      WITH commits AS (
        INSERT INTO tidemark.changelog_commit (position, xid, committed_at)
        SELECT u.p, u.x::xid8, u.c::timestamptz FROM unnest(?::bigint[], ?::text[], ?::text[]) AS u(p, x, c)
        ON CONFLICT DO NOTHING),
      changes AS (
        INSERT INTO tidemark.changelog (xid, relid, schema_name, table_name, op, key, before, after, changed_at)
        SELECT u.x::xid8, u.r::oid, u.s, u.t, u.o, u.k::jsonb, u.b::jsonb, u.a::jsonb, u.c::timestamptz
          FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
               WITH ORDINALITY AS u(x, r, s, t, o, k, b, a, c, n)
         ORDER BY u.n),
      attributed AS (
        INSERT INTO tidemark.change_attribution (xid, caller, tool, idempotency_key, plan_id)
        SELECT u.x::xid8, u.c, u.t, u.k, u.p FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) AS u(x, c, t, k, p)
        ON CONFLICT (xid) DO NOTHING),
      state AS (
        UPDATE tidemark.changelog_state SET decoded_lsn = ?, decoding_from = coalesce(decoding_from, ?::bigint))
      SELECT pg_notify('tidemark_changelog', '') WHERE ?::boolean""";
  /** How long the epoch of transaction ids read from the server is used to widen decoded 32-bit xids. */
  static final long EPOCH_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** Most decoded changes held before they are stored, whatever changelog.relay-batch-size says. */
  static final int STORE_BATCH = 1000;

  private final String jdbcUrl;
  private final String storeJdbcUrl;
  private final String user;
  private final String password;
  private final java.util.Map<String, String> ssl;
  private final String slot;
  private final String publication;
  private final int batchSize;
  private final long pollMs;
  private final Listener listener;

  private volatile boolean running = true;
  private volatile Connection replication;
  private volatile boolean active;

  // ---- per tenure ----
  private Connection store;
  private Connection served;
  private KeyRing keys;
  private long keysReadAt;
  private Long decodingFrom;
  private long decodedLsn;
  private long lastPosition;
  private long lastPositionRows;
  private final Map<Integer, Rel> relations = new HashMap<>();

  // ---- the transaction being decoded ----
  private PgOutput.Begin txn;
  private String txnXid;
  private long txnRows;
  private long skipRows;
  private boolean skipTxn;
  private boolean switchSeen;
  private String[] attribution;

  // ---- stored with the next flush ----
  private final List<String[]> rows = new ArrayList<>();
  private final List<Object[]> commits = new ArrayList<>();
  private final List<String[]> attributions = new ArrayList<>();
  private long flushLsn;
  private long confirmLsn;
  private Long newDecodingFrom;
  private long epochBase = -1;
  private long epochReadAt;
  private long lastStoreNanos;

  private record Rel(int relid, String schema, String name, List<PgOutput.Column> columns, List<Integer> key) {}

  /**
   * @param jdbcUrl the served database
   * @param storeJdbcUrl the database the changelog is stored in: {@code jdbcUrl} itself, or database.changelog-url's
   */
  public SlotReader(String jdbcUrl, String storeJdbcUrl, String user, String password, java.util.Map<String, String> ssl, String slot,
      String publication, int batchSize, long pollMs, Listener listener) {
    this.jdbcUrl = jdbcUrl;
    this.storeJdbcUrl = storeJdbcUrl;
    this.user = user;
    this.password = password;
    this.ssl = java.util.Map.copyOf(ssl);
    this.slot = slot;
    this.publication = publication;
    // the relay's batches may be larger; what the reader holds before a store stays at most STORE_BATCH
    this.batchSize = Math.max(100, Math.min(STORE_BATCH, batchSize));
    this.pollMs = pollMs;
    this.listener = listener;
  }

  public boolean active() {
    return active;
  }

  /** Ends the current tenure (the relay could not publish): the loop tries again after a pause. */
  public void abort() {
    Connection c = replication;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // closing is all that was asked
      }
    }
  }

  public void stop() {
    running = false;
    abort();
  }

  @Override
  public void run() {
    while (running) {
      Throwable cause = null;
      boolean standby = false;
      try {
        tenure();
      } catch (SQLException e) {
        standby = SqlStates.OBJECT_IN_USE.equals(e.getSQLState());
        cause = e;
      } catch (RuntimeException e) {
        LOG.error("the slot reader failed", e);
        cause = e;
      } finally {
        closeQuietly();
      }
      if (active) {
        active = false;
        if (running) {
          LOG.warn("the relay stops publishing and retries in {} ms: {}", pollMs, Relay.describe(cause));
        }
        listener.tenureEnded(cause);
      } else if (running && !standby && cause != null) {
        LOG.warn("the relay cannot read the replication slot {} yet, retrying in {} ms: {}", slot, pollMs, Relay.describe(cause));
      }
      if (running) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pollMs));
      }
    }
  }

  private Properties props(boolean forReplication) {
    Properties p = new Properties();
    PGProperty.USER.set(p, user);
    PGProperty.PASSWORD.set(p, password);
    PGProperty.APPLICATION_NAME.set(p, "tidemark-relay");
    // the TLS settings of every other connection (database.ssl-mode), in PgJDBC's words
    ssl.forEach(p::setProperty);
    if (forReplication) {
      PGProperty.REPLICATION.set(p, "database");
      PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, "10");
      PGProperty.PREFER_QUERY_MODE.set(p, "simple");
    }
    return p;
  }

  private void tenure() throws SQLException {
    served = DriverManager.getConnection(jdbcUrl, props(false));
    served.setAutoCommit(false);
    store = DriverManager.getConnection(storeJdbcUrl, props(false));
    try (Statement st = store.createStatement()) {
      // the slot is confirmed past a store once it returns: it must be on disk by then, whatever
      // the server's default (a store lost after the confirmation would be a change lost for good)
      st.execute("SET synchronous_commit = on");
    }
    store.setAutoCommit(false);
    ensureSlot();
    replication = DriverManager.getConnection(jdbcUrl, props(true));
    PGReplicationStream stream = replication.unwrap(PGConnection.class).getReplicationAPI().replicationStream().logical()
        .withSlotName(slot)
        .withSlotOption("proto_version", 1)
        .withSlotOption("publication_names", publication)
        .withSlotOption("messages", true)
        .withStatusInterval(1, TimeUnit.SECONDS)
        .start();
    if (!storeJdbcUrl.equals(jdbcUrl)) {
      moveServedChangelog();
    }
    readState();
    active = true;
    LOG.info("this node's relay holds the replication slot {} (decoded through {})", slot, LogSequenceNumber.valueOf(decodedLsn));
    listener.tenureStarted();
    long lastMessage = System.nanoTime();
    long firstBuffered = 0;
    while (running) {
      ByteBuffer buf = stream.readPending();
      long now = System.nanoTime();
      if (buf == null) {
        // each store is a commit of its own (with its WAL flush): a change is stored at once when
        // the stream pauses and no store ran in the last STORE_DELAY, and otherwise waits at most
        // that long for others to share its store, so a steady stream costs 200 stores a second at most
        boolean quiet = now - lastMessage > IDLE_NANOS && now - lastStoreNanos >= STORE_DELAY_NANOS;
        if (firstBuffered == 0 || quiet || now - firstBuffered > STORE_DELAY_NANOS) {
          flush(stream);
          firstBuffered = 0;
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        continue;
      }
      lastMessage = now;
      handle(PgOutput.parse(buf));
      if (firstBuffered == 0 && (!rows.isEmpty() || flushLsn > decodedLsn)) {
        firstBuffered = now;
      }
      if (rows.size() >= batchSize || commits.size() >= batchSize) {
        flush(stream);
        firstBuffered = 0;
      }
    }
  }

  /**
   * A slot that is gone (dropped, or the server was rebuilt) or invalidated (it fell behind
   * max_slot_wal_keep_size) lost changes no one will see: a new slot starts from now, and every
   * cursor from before answers CURSOR_EXPIRED (the retention horizon moves to the new start).
   */
  private void ensureSlot() throws SQLException {
    String walStatus = null;
    boolean exists;
    try (PreparedStatement ps = served.prepareStatement("SELECT wal_status FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        exists = rs.next();
        if (exists) {
          walStatus = rs.getString(1);
        }
      }
    }
    served.commit();
    if (exists && !"lost".equals(walStatus)) {
      return;
    }
    LOG.error("the replication slot {} is {}: changes made since the relay last read it are lost; a new slot starts now,"
        + " and every cursor from before answers CURSOR_EXPIRED", slot, exists ? "invalidated" : "missing");
    store.setAutoCommit(true);
    served.setAutoCommit(true);
    try (Statement st = served.createStatement(); Statement kept = store.createStatement()) {
      if (exists) {
        st.execute("SELECT pg_drop_replication_slot('" + slot.replace("'", "''") + "')");
      }
      // every cursor from before expires first: a reader between the slot's creation and the horizon's
      // move below would otherwise get a page without the lost changes and no CURSOR_EXPIRED
      long now;
      try (ResultSet rs = st.executeQuery("SELECT (pg_current_wal_insert_lsn() - '0/0')::bigint")) {
        rs.next();
        now = rs.getLong(1);
      }
      kept.executeUpdate("UPDATE tidemark.changelog_state SET pruned_commit = " + now + ", pruned_change = 0 WHERE pruned_commit < " + now);
      long start;
      try (ResultSet rs = st.executeQuery("SELECT lsn - '0/0' FROM pg_create_logical_replication_slot('" + slot.replace("'", "''")
          + "', 'pgoutput')")) {
        rs.next();
        start = rs.getLong(1);
      }
      kept.executeUpdate("UPDATE tidemark.changelog_state SET decoding_from = coalesce(decoding_from, " + start + "), decoded_lsn = "
          + start + ", pruned_commit = greatest(pruned_commit, " + start + "), pruned_change = 0");
    } finally {
      store.setAutoCommit(false);
      served.setAutoCommit(false);
    }
  }

  /**
   * Tables whose rows move from the served database's changelog to the store, each as: the
   * served side's select of one batch after a key, as text, and the store's insert of it.
   */
  private static final String[][] MOVED = {
      {"SELECT position::text, xid::text, committed_at::text FROM tidemark.changelog_commit WHERE position > ?::bigint"
          + " ORDER BY position LIMIT " + STORE_BATCH,
          "INSERT INTO tidemark.changelog_commit (position, xid, committed_at) SELECT u.a::bigint, u.b::xid8, u.c::timestamptz"
              + " FROM unnest(?::text[], ?::text[], ?::text[]) u(a, b, c) ON CONFLICT DO NOTHING"},
      {"SELECT id::text, xid::text, relid::text, schema_name, table_name, op, key::text, before::text, after::text, changed_at::text,"
          + " caller, tool, idempotency_key, plan_id FROM tidemark.changelog WHERE id > ?::bigint ORDER BY id LIMIT " + STORE_BATCH,
          "INSERT INTO tidemark.changelog (id, xid, relid, schema_name, table_name, op, key, before, after, changed_at, caller, tool,"
              + " idempotency_key, plan_id) SELECT u.a::bigint, u.b::xid8, u.c::oid, u.d, u.e, u.f, u.g::jsonb, u.h::jsonb, u.i::jsonb,"
              + " u.j::timestamptz, u.k, u.l, u.m, u.n FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],"
              + " ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) u(a, b, c, d, e, f, g, h, i, j, k, l,"
              + " m, n) ON CONFLICT DO NOTHING"},
      {"SELECT xid::text::bigint::text, caller, tool, idempotency_key, plan_id, created_at::text FROM tidemark.change_attribution"
          + " WHERE xid > ?::bigint::text::xid8 ORDER BY xid LIMIT " + STORE_BATCH,
          "INSERT INTO tidemark.change_attribution (xid, caller, tool, idempotency_key, plan_id, created_at) SELECT u.a::xid8, u.b, u.c,"
              + " u.d, u.e, u.f::timestamptz FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])"
              + " u(a, b, c, d, e, f) ON CONFLICT DO NOTHING"},
      {"SELECT relid::text::bigint::text, key_columns::text, other_columns::text FROM tidemark.changelog_relation"
          + " WHERE relid::text::bigint > ?::bigint ORDER BY relid::text::bigint LIMIT " + STORE_BATCH,
          "INSERT INTO tidemark.changelog_relation (relid, key_columns, other_columns) SELECT u.a::oid, u.b::text[], u.c::boolean"
              + " FROM unnest(?::text[], ?::text[], ?::text[]) u(a, b, c) ON CONFLICT DO NOTHING"}};

  /**
   * The first tenure with database.changelog-url set moves what the served database's changelog
   * holds into the store, with its ids, positions and the relay's progress, so that no cursor a
   * caller holds changes meaning and nothing is published twice or lost. It runs while this
   * reader holds the slot, the only writer of either changelog, and is marked done in the store in
   * the transaction that finishes it; the served side is emptied after, and again at any later
   * tenure that finds it not empty (a move that ended between the two).
   */
  private void moveServedChangelog() throws SQLException {
    // each changelog_state row holds a random secret of its own: the same one on both sides is one
    // database under two names (a host alias), whose changelog must not be moved onto itself and emptied
    String servedSecret;
    String storeSecret;
    try (Statement st = served.createStatement(); ResultSet rs = st.executeQuery("SELECT secret FROM tidemark.changelog_state")) {
      rs.next();
      servedSecret = rs.getString(1);
    }
    served.commit();
    try (Statement st = store.createStatement(); ResultSet rs = st.executeQuery("SELECT secret FROM tidemark.changelog_state")) {
      rs.next();
      storeSecret = rs.getString(1);
    }
    store.commit();
    if (servedSecret.equals(storeSecret)) {
      throw new IllegalStateException("database.changelog-url names the served database itself (under another host name):"
          + " leave it empty to store the changelog there, or name a database of its own");
    }
    boolean moved;
    try (Statement st = store.createStatement(); ResultSet rs = st.executeQuery("SELECT moved_at IS NOT NULL FROM tidemark.changelog_state")) {
      rs.next();
      moved = rs.getBoolean(1);
    }
    store.commit();
    if (!moved) {
      long rowsMoved = 0;
      for (String[] table : MOVED) {
        long after = -1;
        while (true) {
          List<String[]> batch = new ArrayList<>();
          try (PreparedStatement ps = served.prepareStatement(table[0])) {
            ps.setLong(1, after);
            try (ResultSet rs = ps.executeQuery()) {
              int width = rs.getMetaData().getColumnCount();
              while (rs.next()) {
                String[] row = new String[width];
                for (int i = 0; i < width; i++) {
                  row[i] = rs.getString(i + 1);
                }
                batch.add(row);
              }
            }
          }
          if (batch.isEmpty()) {
            break;
          }
          try (PreparedStatement ps = store.prepareStatement(table[1])) {
            setColumns(ps, 1, "text", batch, batch.get(0).length);
            ps.executeUpdate();
          }
          rowsMoved += batch.size();
          after = Long.parseLong(batch.get(batch.size() - 1)[0]);
        }
      }
      try (Statement st = store.createStatement()) {
        st.execute("SELECT setval(pg_get_serial_sequence('tidemark.changelog', 'id'), greatest((SELECT max(id) FROM tidemark.changelog),"
            + " (SELECT last_value FROM tidemark.changelog_id_seq), 1))");
      }
      try (Statement st = served.createStatement();
          ResultSet rs = st.executeQuery("SELECT published_commit, published_change, pruned_commit, pruned_change, decoding_from,"
              + " decoded_lsn FROM tidemark.changelog_state");
          PreparedStatement ps = store.prepareStatement("UPDATE tidemark.changelog_state SET published_commit = ?, published_change = ?,"
              + " pruned_commit = ?, pruned_change = ?, decoding_from = ?, decoded_lsn = ?, moved_at = now()")) {
        rs.next();
        for (int i = 1; i <= 6; i++) {
          ps.setObject(i, rs.getObject(i));
        }
        ps.executeUpdate();
      }
      served.commit();
      store.commit();
      LOG.info("moved the served database's changelog ({} rows) into the changelog's own database (database.changelog-url)", rowsMoved);
    }
    try (Statement st = served.createStatement()) {
      st.execute("DO $$ BEGIN IF EXISTS (SELECT 1 FROM tidemark.changelog_commit) OR EXISTS (SELECT 1 FROM tidemark.change_attribution) THEN"
          + " TRUNCATE tidemark.changelog, tidemark.changelog_commit, tidemark.change_attribution; END IF; END $$");
    }
    served.commit();
  }

  private void readState() throws SQLException {
    try (Statement st = store.createStatement();
        ResultSet rs = st.executeQuery("""
            SELECT s.decoding_from, s.decoded_lsn, k.position, (SELECT count(*) FROM tidemark.changelog c WHERE c.xid = k.xid)
              FROM tidemark.changelog_state s
              LEFT JOIN LATERAL (SELECT position, xid FROM tidemark.changelog_commit ORDER BY position DESC LIMIT 1) k ON true""")) {
      rs.next();
      long from = rs.getLong(1);
      decodingFrom = rs.wasNull() ? null : from;
      decodedLsn = rs.getLong(2);
      lastPosition = rs.getLong(3);
      lastPositionRows = rs.getLong(4);
    }
    store.commit();
    readKeys();
    epochBase = -1;  // a new tenure may be on another server (the slot was lost and made again)
    relations.clear();
    txn = null;
    rows.clear();
    commits.clear();
    attributions.clear();
    newDecodingFrom = null;
    flushLsn = 0;
    confirmLsn = 0;
  }

  private void readKeys() throws SQLException {
    List<KeyRing.Key> read = new ArrayList<>();
    try (Statement st = served.createStatement(); ResultSet rs = st.executeQuery(KeyRing.SQL)) {
      while (rs.next()) {
        read.add(KeyRing.Key.of(rs.getInt("id"), rs.getBytes("secret"), rs.getObject("active_from", java.time.OffsetDateTime.class),
            rs.getObject("retires_at", java.time.OffsetDateTime.class)));
      }
    }
    served.commit();
    if (!read.isEmpty()) {
      keys = new KeyRing(read);
    }
    keysReadAt = System.currentTimeMillis();
  }

  private void handle(PgOutput.Message m) throws SQLException {
    if (m instanceof PgOutput.Begin b) {
      begin(b);
    } else if (m instanceof PgOutput.Commit c) {
      commit(c);
    } else if (m instanceof PgOutput.Relation r) {
      relation(r);
    } else if (m instanceof PgOutput.Insert i) {
      change(i.relid(), "INSERT", null, false, i.row());
    } else if (m instanceof PgOutput.Update u) {
      change(u.relid(), "UPDATE", u.old(), u.oldIsKeyOnly(), u.row());
    } else if (m instanceof PgOutput.Delete d) {
      change(d.relid(), "DELETE", d.old(), d.oldIsKeyOnly(), null);
    } else if (m instanceof PgOutput.Truncate t) {
      for (int relid : t.relids()) {
        Rel rel = relations.get(relid);
        if (rel != null) {
          add(rel.relid, rel.schema, rel.name, "TRUNCATE", null, null, null);
        }
      }
    } else if (m instanceof PgOutput.LogicalMessage msg) {
      message(msg);
    }
  }

  private void begin(PgOutput.Begin b) throws SQLException {
    txn = b;
    txnRows = 0;
    attribution = null;
    switchSeen = false;
    if (epochBase < 0 || System.nanoTime() - epochReadAt > EPOCH_REFRESH_NANOS) {
      epochBase = currentFullXid();
      epochReadAt = System.nanoTime();
    }
    long full = widen(epochBase, b.xid());
    txnXid = Long.toString(full);
    // the triggers captured what committed before the switch; what was stored is not stored again.
    // Strictly below decodedLsn: a fence stores its end LSN, which is where the next record starts,
    // and a commit record right after a fence has exactly that LSN and was never stored; the last
    // transaction stored, whose commit LSN decodedLsn may equal, has its rows skipped by count below
    skipTxn = decodingFrom == null || b.finalLsn() < decodedLsn || b.finalLsn() < lastPosition;
    skipRows = b.finalLsn() == lastPosition ? lastPositionRows : 0;
  }

  /**
   * The full (64-bit) id of a transaction whose 32-bit id pgoutput sent, from a full id read from
   * the server near it: the one within 2^31 of {@code near}, since no two live transactions are
   * further apart than that.
   */
  static long widen(long near, int xid) {
    long full = (near & ~0xFFFF_FFFFL) | (xid & 0xFFFF_FFFFL);
    if (full > near + (1L << 31)) {
      full -= 1L << 32;
    } else if (full < near - (1L << 31)) {
      full += 1L << 32;
    }
    return full;
  }

  private long currentFullXid() throws SQLException {
    try (Statement st = served.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint")) {
      rs.next();
      long v = rs.getLong(1);
      served.commit();
      return v;
    }
  }

  private void commit(PgOutput.Commit c) {
    if (switchSeen && decodingFrom == null) {
      decodingFrom = txn.finalLsn();
      newDecodingFrom = decodingFrom;
      LOG.info("capture by logical decoding starts at {} (any change before it was captured by the triggers of schema versions"
          + " before 7)", LogSequenceNumber.valueOf(decodingFrom));
    }
    if (!skipTxn && attribution != null && txnRows > 0) {
      attributions.add(attribution);
    }
    if (!skipTxn && txnRows > 0) {
      // only transactions that stored something move the stored progress: PostgreSQL before 15
      // sends empty transactions, the relay's own writes among them, and each would cost a write
      flushLsn = Math.max(flushLsn, txn.finalLsn());
    }
    confirmLsn = Math.max(confirmLsn, c.endLsn());
    txn = null;
  }

  private void relation(PgOutput.Relation r) throws SQLException {
    List<String> keyColumns = null;
    try (PreparedStatement ps = served.prepareStatement("""
        SELECT coalesce((SELECT key_columns FROM tidemark.captured_table WHERE relid = ?::oid),
                        ARRAY(SELECT a.attname::text FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
                                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                               WHERE i.indrelid = ?::oid AND i.indisprimary ORDER BY k.ord))""")) {
      ps.setLong(1, r.relid() & 0xFFFF_FFFFL);
      ps.setLong(2, r.relid() & 0xFFFF_FFFFL);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next() && rs.getArray(1) != null) {
          keyColumns = List.of((String[]) rs.getArray(1).getArray());
        }
      }
    }
    served.commit();
    List<Integer> key = new ArrayList<>();
    if (keyColumns != null) {
      for (String col : keyColumns) {
        for (int i = 0; i < r.columns().size(); i++) {
          if (r.columns().get(i).name().equals(col)) {
            key.add(i);
          }
        }
      }
      if (key.size() != keyColumns.size()) {
        key.clear();
      }
    }
    relations.put(r.relid(), new Rel(r.relid(), r.schema(), r.name(), r.columns(), key));
    // what restore_rows and undo_transaction need of the table, kept beside its changes: its own
    // statement and commit, since nothing of a transaction is in the store's transaction until a flush
    try (PreparedStatement ps = store.prepareStatement("""
        INSERT INTO tidemark.changelog_relation (relid, key_columns, other_columns) VALUES (?::oid, ?, ?)
        ON CONFLICT (relid) DO UPDATE SET key_columns = excluded.key_columns, other_columns = excluded.other_columns""")) {
      ps.setLong(1, r.relid() & 0xFFFF_FFFFL);
      ps.setArray(2, keyColumns == null ? null : store.createArrayOf("text", keyColumns.toArray()));
      ps.setBoolean(3, keyColumns != null && r.columns().size() > keyColumns.size());
      ps.executeUpdate();
    }
    store.commit();
  }

  /**
   * {@code oldKeyOnly}: the old row holds only the replica identity's columns (a table of
   * database.key-only-tables), and PostgreSQL sends the others as NULL: they are left out of the
   * before-image rather than shown as NULLs the row never had.
   */
  private void change(int relid, String op, PgOutput.Tuple old, boolean oldKeyOnly, PgOutput.Tuple row) throws SQLException {
    Rel rel = relations.get(relid);
    if (rel == null) {
      throw new IllegalStateException("a change to relation " + relid + " came before its description");
    }
    JsonObject before = old == null ? null : image(rel, old, null, oldKeyOnly);
    JsonObject after = row == null ? null : image(rel, row, oldKeyOnly ? null : old, false);
    JsonObject img = after != null ? after : before;
    Object key;
    if (rel.key.isEmpty()) {
      key = img;  // no primary key: the whole row is the identity
    } else {
      JsonArray k = new JsonArray();
      for (int i : rel.key) {
        k.add(img == null ? null : img.getValue(rel.columns.get(i).name()));
      }
      key = k;
    }
    add(relid, rel.schema, rel.name, op, key, before, after);
  }

  /**
   * A row's image; an unchanged TOASTed value comes from the old row (replica identity FULL), or is
   * left out. {@code identityOnly}: only the replica identity's columns.
   */
  private static JsonObject image(Rel rel, PgOutput.Tuple tuple, PgOutput.Tuple old, boolean identityOnly) {
    JsonObject out = new JsonObject();
    String[] values = tuple.values();
    for (int i = 0; i < values.length && i < rel.columns.size(); i++) {
      String v = values[i];
      if (v == PgOutput.UNCHANGED_TOAST) {
        if (old == null || i >= old.values().length || old.values()[i] == PgOutput.UNCHANGED_TOAST) {
          continue;
        }
        v = old.values()[i];
      }
      PgOutput.Column col = rel.columns.get(i);
      if (identityOnly && !col.key()) {
        continue;
      }
      out.put(col.name(), TextValues.toJson(col.typeOid(), v));
    }
    return out;
  }

  private void message(PgOutput.LogicalMessage m) throws SQLException {
    if (!m.transactional()) {
      // anyone may emit one, and a rollback keeps it: it only marks a point in the WAL (staleness fences)
      if ("tidemark.fence".equals(m.prefix()) && txn == null) {
        flushLsn = Math.max(flushLsn, m.lsn());
      }
      return;
    }
    if (txn == null) {
      return;
    }
    switch (m.prefix()) {
      case "tidemark.switch" -> switchSeen = true;
      case "tidemark.ddl" -> {
        JsonObject d = new JsonObject(m.content());
        Object relid = d.getValue("relid");
        // jsonb writes an oid as a string
        add(relid == null ? null : (int) Long.parseLong(relid.toString()), d.getString("schema"), d.getString("table"), "DDL", null, null,
            new JsonObject().put("command", d.getString("command")).put("object", d.getString("object")));
      }
      case "tidemark.attribution" -> attribution = verifiedAttribution(m.content());
      default -> { }
    }
  }

  /** The attribution, when Tidemark signed it for this very transaction; null (and a warning) otherwise. */
  private String[] verifiedAttribution(String content) throws SQLException {
    if (System.currentTimeMillis() - keysReadAt > KEYS_REFRESH_MS) {
      readKeys();
    }
    try {
      JsonObject signed = new JsonObject(content);
      String body = signed.getString("body");
      if (keys == null || body == null || !keys.sqlSignatureOk("attribution|" + body, signed.getString("mac"))) {
        readKeys();  // a key added since the last read
        if (keys == null || body == null || !keys.sqlSignatureOk("attribution|" + body, signed.getString("mac"))) {
          LOG.warn("ignoring an attribution message of transaction {} that Tidemark did not sign", txnXid);
          return null;
        }
      }
      JsonObject a = new JsonObject(body);
      if (!txnXid.equals(a.getString("xid"))) {
        LOG.warn("ignoring an attribution message signed for transaction {} in transaction {}", a.getString("xid"), txnXid);
        return null;
      }
      return new String[] {txnXid, a.getString("caller"), a.getString("tool"), a.getString("idempotency_key"), a.getString("plan_id")};
    } catch (RuntimeException e) {
      LOG.warn("ignoring a malformed attribution message in transaction {}", txnXid);
      return null;
    }
  }

  private void add(Integer relid, String schema, String table, String op, Object key, JsonObject before, JsonObject after) {
    if (skipTxn) {
      return;
    }
    txnRows++;
    if (skipRows > 0) {
      skipRows--;  // stored before the last restart
      return;
    }
    String committed = Instant.ofEpochSecond(0, (txn.commitMicros() + PgOutput.PG_EPOCH_MICROS) * 1000).toString();
    if (commits.isEmpty() || (long) commits.get(commits.size() - 1)[0] != txn.finalLsn()) {
      commits.add(new Object[] {txn.finalLsn(), txnXid, committed});
    }
    rows.add(new String[] {txnXid, relid == null ? null : Long.toString(relid & 0xFFFF_FFFFL), schema, table, op,
        key == null ? null : io.vertx.core.json.Json.encode(key), before == null ? null : before.encode(),
        after == null ? null : after.encode(), committed});
  }

  /** Stores what was decoded in one transaction, then confirms the slot up to it. */
  private void flush(PGReplicationStream stream) throws SQLException {
    if (rows.isEmpty() && attributions.isEmpty() && newDecodingFrom == null && flushLsn <= decodedLsn) {
      if (confirmLsn > 0 && txn == null) {
        confirm(stream, confirmLsn);
      }
      return;
    }
    long decoded = Math.max(decodedLsn, flushLsn);
    boolean wrote = !rows.isEmpty();
    // a statement of its own is a transaction of its own: one round trip, no BEGIN and COMMIT
    store.setAutoCommit(true);
    try (PreparedStatement ps = store.prepareStatement(STORE)) {
      int at = 1;
      at = setColumns(ps, at, "bigint", commits, 3);
      at = setColumns(ps, at, "text", rows, 9);
      at = setColumns(ps, at, "text", attributions, 5);
      ps.setLong(at++, decoded);
      if (newDecodingFrom == null) {
        ps.setNull(at++, java.sql.Types.BIGINT);
      } else {
        ps.setLong(at++, newDecodingFrom);
      }
      ps.setBoolean(at, wrote);
      ps.execute();
    } catch (SQLException e) {
      try {
        store.setAutoCommit(false);
      } catch (SQLException again) {
        e.addSuppressed(again);  // the connection broke: the store's own failure is what to report
      }
      throw e;
    }
    store.setAutoCommit(false);
    lastStoreNanos = System.nanoTime();
    decodedLsn = decoded;
    if (!commits.isEmpty()) {
      lastPosition = (long) commits.get(commits.size() - 1)[0];
    }
    rows.clear();
    commits.clear();
    attributions.clear();
    newDecodingFrom = null;
    if (txn == null && confirmLsn > 0) {
      confirm(stream, confirmLsn);
    }
    if (wrote) {
      listener.stored();
    }
  }

  /**
   * Binds {@code width} array parameters from {@code at}, column {@code c} of every row in the
   * c-th (the commits' first column as bigint, the rest as text); returns the next parameter index.
   */
  private int setColumns(PreparedStatement ps, int at, String firstType, List<? extends Object[]> from, int width) throws SQLException {
    for (int col = 0; col < width; col++) {
      String type = col == 0 ? firstType : "text";
      Object[] values = "bigint".equals(type) ? new Long[from.size()] : new String[from.size()];
      for (int i = 0; i < values.length; i++) {
        values[i] = ((Object[]) from.get(i))[col];
      }
      ps.setArray(at++, store.createArrayOf(type, values));
    }
    return at;
  }

  private void confirm(PGReplicationStream stream, long lsn) {
    LogSequenceNumber l = LogSequenceNumber.valueOf(lsn);
    stream.setFlushedLSN(l);
    stream.setAppliedLSN(l);
    confirmLsn = 0;
  }

  private void closeQuietly() {
    for (Connection c : new Connection[] {replication, store, served}) {
      if (c != null) {
        try {
          c.close();
        } catch (SQLException ignored) {
          // the tenure is over either way
        }
      }
    }
    replication = null;
    store = null;
    served = null;
  }
}
