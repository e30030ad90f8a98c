package dev.tidemark.query.events.impl;

import dev.tidemark.contract.KeyRing;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;

/** The events consumers and their dead letters in {@code tidemark.event_consumer} and {@code tidemark.event_dead_letter}, read and written as Tidemark's login. */
public final class ConsumerStore {

  /** One consumer as it was created; {@code deliversFrom} null: every change the topic keeps. */
  public record Consumer(String owner, String name, String group, List<String> tables, int leaseSeconds, OffsetDateTime createdAt,
      Instant deliversFrom, long delivered, long redelivered, String deadLetterTopic, long deadLetterOffset) {

    public boolean wants(String schema, String table) {
      return tables.contains(schema + "." + table) || tables.contains(table);
    }
  }

  private static final String COLUMNS = "owner, name, group_id, tables, lease_seconds, created_at, delivers_from, delivered, redelivered,"
      + " dead_letter_topic, dead_letter_offset";

  private static final String DEAD_LETTER = "INSERT INTO tidemark.event_dead_letter (group_id, topic_partition, record_offset,"
      + " event_id, delivery_count, record)"
      + " SELECT $1, (l->>'partition')::int, (l->>'offset')::bigint, l->>'event_id', (l->>'delivery_count')::int, l->'record'"
      + " FROM jsonb_array_elements($2::jsonb) l ON CONFLICT (group_id, topic_partition, record_offset)"
      + " DO UPDATE SET delivery_count = EXCLUDED.delivery_count, dead_at = now(), redriven_at = NULL";

  private final Pool pool;
  private final String database;

  public String database() {
    return database;
  }

  public ConsumerStore(Pool pool, String database) {
    this.pool = pool;
    this.database = database;
  }

  /**
   * The share group of caller {@code owner}'s consumer {@code name}: it names a hash of the caller's
   * id, so two callers' consumers of one name are two groups, and no name reaches another's.
   */
  public String groupId(String owner, String name) {
    return "tidemark." + database + "." + KeyRing.sha256Hex(owner).substring(0, 16) + "." + name;
  }

  /** The share group of every consumer of this database. */
  public Future<List<String>> groups() {
    return pool.query("SELECT group_id FROM tidemark.event_consumer").execute().map(rows -> {
      List<String> out = new java.util.ArrayList<>();
      rows.forEach(r -> out.add(r.getString(0)));
      return out;
    });
  }

  public Future<Optional<Consumer>> find(String owner, String name) {
    return pool.preparedQuery("SELECT " + COLUMNS + " FROM tidemark.event_consumer WHERE owner = $1 AND name = $2")
        .execute(Tuple.of(owner, name))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(of(rows.iterator().next())));
  }

  /** Creates the consumer unless it exists; the one stored either way, and whether this call made it. */
  public Future<Created> create(String owner, String name, List<String> tables, int leaseSeconds, String deadLetterTopic) {
    return pool.preparedQuery("INSERT INTO tidemark.event_consumer (owner, name, group_id, tables, lease_seconds, delivers_from,"
            + " dead_letter_topic) VALUES ($1, $2, $3, $4, $5, now(), $6) ON CONFLICT DO NOTHING RETURNING " + COLUMNS)
        .execute(Tuple.of(owner, name, groupId(owner, name), tables.toArray(String[]::new), leaseSeconds, deadLetterTopic))
        .compose(rows -> rows.size() > 0 ? Future.succeededFuture(new Created(of(rows.iterator().next()), true))
            : find(owner, name).map(found -> new Created(found.orElseThrow(), false)));
  }

  public record Created(Consumer consumer, boolean created) {}

  public Future<Void> count(String group, int delivered, int redelivered) {
    return pool.preparedQuery("UPDATE tidemark.event_consumer SET delivered = delivered + $2, redelivered = redelivered + $3"
        + " WHERE group_id = $1").execute(Tuple.of(group, delivered, redelivered)).mapEmpty();
  }

  /** Stores dead letters: {@code {"partition", "offset", "event_id", "delivery_count", "record"}}; one already stored stays. */
  public Future<Void> deadLetter(String group, JsonArray letters) {
    return pool.preparedQuery(DEAD_LETTER).execute(Tuple.of(group, letters)).mapEmpty();
  }

  /**
   * Dead letters copied from the broker's dead-letter topic up to {@code offset} (stored as
   * {@link #deadLetter}), and that offset, in one transaction, unless another node copied further.
   */
  public Future<Void> copiedDeadLetters(String group, JsonArray letters, long offset) {
    return pool.withTransaction(conn -> conn.preparedQuery("UPDATE tidemark.event_consumer SET dead_letter_offset = $2"
            + " WHERE group_id = $1 AND dead_letter_offset < $2").execute(Tuple.of(group, offset))
        .compose(rows -> rows.rowCount() == 0 || letters.isEmpty() ? Future.succeededFuture()
            : conn.preparedQuery(DEAD_LETTER).execute(Tuple.of(group, letters)).mapEmpty()));
  }

  /** Dead letters waiting and re-driven. */
  public Future<long[]> deadLetterCounts(String group) {
    return pool.preparedQuery("SELECT count(*) FILTER (WHERE redriven_at IS NULL), count(*) FILTER (WHERE redriven_at IS NOT NULL)"
            + " FROM tidemark.event_dead_letter WHERE group_id = $1").execute(Tuple.of(group))
        .map(rows -> {
          Row r = rows.iterator().next();
          return new long[] {r.getLong(0), r.getLong(1)};
        });
  }

  /** The oldest waiting dead letter of each partition: {@code {"<partition>": offset}}. */
  public Future<JsonObject> oldestDeadLetters(String group) {
    return pool.preparedQuery("SELECT topic_partition, min(record_offset) FROM tidemark.event_dead_letter"
            + " WHERE group_id = $1 AND redriven_at IS NULL GROUP BY topic_partition").execute(Tuple.of(group))
        .map(rows -> {
          JsonObject out = new JsonObject();
          rows.forEach(r -> out.put(String.valueOf(r.getInteger(0)), r.getLong(1)));
          return out;
        });
  }

  /**
   * After a seek: the time before which nothing is delivered ({@code "earliest"}: none, {@code "latest"}:
   * now, {@code "time"}: {@code time}, {@code "keep"}: as it was), and with {@code redrive} the
   * waiting dead letters marked re-driven; how many were.
   */
  public Future<Long> moved(String group, String mode, OffsetDateTime time, boolean redrive) {
    return pool.withTransaction(conn -> conn.preparedQuery("UPDATE tidemark.event_consumer SET delivers_from = CASE $2"
                + " WHEN 'earliest' THEN NULL WHEN 'latest' THEN now() WHEN 'time' THEN $3 ELSE delivers_from END WHERE group_id = $1")
            .execute(Tuple.of(group, mode, time))
            .compose(x -> redrive
                ? conn.preparedQuery("UPDATE tidemark.event_dead_letter SET redriven_at = now() WHERE group_id = $1 AND redriven_at IS NULL")
                    .execute(Tuple.of(group)).map(rows -> (long) rows.rowCount())
                : Future.succeededFuture(0L)));
  }

  private static Consumer of(Row r) {
    OffsetDateTime from = r.getOffsetDateTime("delivers_from");
    return new Consumer(r.getString("owner"), r.getString("name"), r.getString("group_id"), List.of(r.getArrayOfStrings("tables")),
        r.getInteger("lease_seconds"), r.getOffsetDateTime("created_at"), from == null ? null : from.toInstant(),
        r.getLong("delivered"), r.getLong("redelivered"), r.getString("dead_letter_topic"), r.getLong("dead_letter_offset"));
  }
}
