package dev.tidemark.query.events.impl;

import dev.tidemark.contract.Caller;
import dev.tidemark.contract.Digests;
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

  /**
   * One consumer as it was created; {@code deliversFrom} null: every change the topic keeps;
   * {@code ownerRole} null for one made before consumers counted against their role.
   */
  public record Consumer(String owner, String name, String group, List<String> tables, int leaseSeconds, OffsetDateTime createdAt,
      Instant deliversFrom, long delivered, long redelivered, String deadLetterTopic, long deadLetterOffset, String ownerRole,
      OffsetDateTime lastUsedAt) {

    public boolean wants(String schema, String table) {
      return tables.contains(schema + "." + table) || tables.contains(table);
    }
  }

  private static final String COLUMNS = "owner, name, group_id, tables, lease_seconds, created_at, delivers_from, delivered, redelivered,"
      + " dead_letter_topic, dead_letter_offset, owner_role, last_used_at";

  /** A consumer counts against its quotas until it is marked for removal or claimed by the node that removes it. */
  private static final String COUNTED = "remove_requested_at IS NULL AND removing_since IS NULL";

  private static final String USE = "SELECT count(*) FILTER (WHERE owner = $1) AS mine, count(*) FILTER (WHERE owner_role = $2) AS role"
      + " FROM tidemark.event_consumer WHERE (owner = $1 OR owner_role = $2) AND " + COUNTED;

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
    return "tidemark." + database + "." + Digests.sha256Hex(owner).substring(0, 16) + "." + name;
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

  /** The consumers that count against {@code caller}'s quota, and against its role's. */
  public record Use(long mine, long role) {}

  public Future<Use> use(Caller caller) {
    return pool.preparedQuery(USE).execute(Tuple.of(caller.id(), caller.pgRole()))
        .map(rows -> new Use(rows.iterator().next().getLong("mine"), rows.iterator().next().getLong("role")));
  }

  /**
   * Creates the consumer unless it exists; the one stored either way, and whether this call made
   * it. Creations of one role take turns (an advisory lock for the transaction), so that {@code
   * allowed} sees every consumer counted before it: it fails the creation, and nothing is stored,
   * when the caller's use is past a quota.
   */
  public Future<Created> create(Caller caller, String name, List<String> tables, int leaseSeconds, String deadLetterTopic,
      java.util.function.Function<Use, Future<Void>> allowed) {
    return pool.withTransaction(conn -> conn.preparedQuery("SELECT pg_advisory_xact_lock(hashtext('tidemark.event_consumer'), hashtext($1))")
        .execute(Tuple.of(caller.pgRole()))
        .compose(x -> conn.preparedQuery("SELECT " + COLUMNS + " FROM tidemark.event_consumer WHERE owner = $1 AND name = $2")
            .execute(Tuple.of(caller.id(), name)))
        .compose(existing -> existing.size() > 0 ? Future.succeededFuture(new Created(of(existing.iterator().next()), false))
            : conn.preparedQuery(USE).execute(Tuple.of(caller.id(), caller.pgRole()))
                .compose(rows -> allowed.apply(new Use(rows.iterator().next().getLong("mine"), rows.iterator().next().getLong("role"))))
                .compose(x -> conn.preparedQuery("INSERT INTO tidemark.event_consumer (owner, name, group_id, tables, lease_seconds,"
                        + " delivers_from, dead_letter_topic, owner_role, owner_name) VALUES ($1, $2, $3, $4, $5, now(), $6, $7, $8)"
                        + " RETURNING " + COLUMNS)
                    .execute(Tuple.of(caller.id(), name, groupId(caller.id(), name), tables.toArray(String[]::new), leaseSeconds,
                        deadLetterTopic, caller.pgRole(), caller.name())))
                .map(rows -> new Created(of(rows.iterator().next()), true))));
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

  /** Marks the consumer of share group {@code group} used now. */
  public Future<Void> touch(String group) {
    return pool.preparedQuery("UPDATE tidemark.event_consumer SET last_used_at = now() WHERE group_id = $1").execute(Tuple.of(group))
        .mapEmpty();
  }

  /** A consumer claimed for removal by this node: why ({@code requested}: by an administrator, else unused). */
  public record Claimed(String owner, String name, String group, String deadLetterTopic, boolean requested) {}

  private static final String REMOVABLE = "(remove_requested_at IS NOT NULL"
      + " OR ($1::bigint > 0 AND last_used_at < now() - make_interval(secs => $1::bigint)))";

  /**
   * Claims up to {@code limit} consumers to remove for node {@code node}: those an administrator
   * marked, and (when {@code idleSeconds} is above 0) those unused for that long. A consumer another
   * node is claiming is skipped (its rows are locked), and one claimed longer ago than
   * {@code staleSeconds} is claimed again: that node died half way.
   */
  public Future<List<Claimed>> claim(String node, long idleSeconds, long staleSeconds, int limit) {
    return pool.preparedQuery("UPDATE tidemark.event_consumer SET removing_since = now(), removing_node = $2"
            + " WHERE group_id IN (SELECT group_id FROM tidemark.event_consumer WHERE " + REMOVABLE
            + " AND (removing_since IS NULL OR removing_since < now() - make_interval(secs => $3::bigint))"
            + " ORDER BY last_used_at LIMIT $4 FOR UPDATE SKIP LOCKED)"
            + " RETURNING owner, name, group_id, dead_letter_topic, remove_requested_at IS NOT NULL AS requested")
        .execute(Tuple.of(idleSeconds, node, staleSeconds, limit))
        .map(rows -> {
          List<Claimed> out = new java.util.ArrayList<>();
          rows.forEach(r -> out.add(new Claimed(r.getString("owner"), r.getString("name"), r.getString("group_id"),
              r.getString("dead_letter_topic"), r.getBoolean("requested"))));
          return out;
        });
  }

  /** Whether the consumer is still {@code node}'s to remove: still claimed by it, and still marked or unused. */
  public Future<Boolean> stillRemovable(String group, String node, long idleSeconds) {
    return pool.preparedQuery("SELECT 1 FROM tidemark.event_consumer WHERE " + REMOVABLE + " AND group_id = $2 AND removing_node = $3")
        .execute(Tuple.of(idleSeconds, group, node)).map(rows -> rows.size() > 0);
  }

  /** Gives up {@code node}'s claim: the consumer was used again, or removing it failed (the next sweep tries again). */
  public Future<Void> unclaim(String group, String node) {
    return pool.preparedQuery("UPDATE tidemark.event_consumer SET removing_since = NULL, removing_node = NULL"
        + " WHERE group_id = $1 AND removing_node = $2").execute(Tuple.of(group, node)).mapEmpty();
  }

  /** Deletes the consumer {@code node} claimed, with its dead letters, once its share group and dead-letter topic are gone. */
  public Future<Boolean> removed(String group, String node) {
    return pool.preparedQuery("DELETE FROM tidemark.event_consumer WHERE group_id = $1 AND removing_node = $2")
        .execute(Tuple.of(group, node)).map(rows -> rows.rowCount() > 0);
  }

  /** Marks the consumer of share group {@code group} for removal; false when there is none. */
  public Future<Boolean> requestRemoval(String group) {
    return pool.preparedQuery("UPDATE tidemark.event_consumer SET remove_requested_at = coalesce(remove_requested_at, now())"
        + " WHERE group_id = $1").execute(Tuple.of(group)).map(rows -> rows.rowCount() > 0);
  }

  /** Whether the consumer of share group {@code group} still exists. */
  public Future<Boolean> exists(String group) {
    return pool.preparedQuery("SELECT 1 FROM tidemark.event_consumer WHERE group_id = $1").execute(Tuple.of(group))
        .map(rows -> rows.size() > 0);
  }

  /** Every consumer of this database, with its dead letters waiting, oldest use first: what an administrator lists. */
  public Future<JsonArray> list() {
    return pool.query("SELECT c.name, c.owner, c.owner_name, c.owner_role, c.tables, c.lease_seconds, c.created_at, c.last_used_at,"
        + " c.group_id, c.dead_letter_topic, c.remove_requested_at, c.removing_since, c.removing_node, c.delivered,"
        + " (SELECT count(*) FROM tidemark.event_dead_letter d WHERE d.group_id = c.group_id AND d.redriven_at IS NULL) AS dead_lettered"
        + " FROM tidemark.event_consumer c ORDER BY c.last_used_at, c.group_id").execute().map(rows -> {
          JsonArray out = new JsonArray();
          for (Row r : rows) {
            JsonObject c = new JsonObject();
            for (int i = 0; i < r.size(); i++) {
              Object v = r.getValue(i);
              if (v != null) {
                c.put(r.getColumnName(i), v instanceof String[] a ? new JsonArray(List.of(a)) : v instanceof OffsetDateTime t ? t.toString() : v);
              }
            }
            out.add(c);
          }
          return out;
        });
  }

  private static Consumer of(Row r) {
    OffsetDateTime from = r.getOffsetDateTime("delivers_from");
    return new Consumer(r.getString("owner"), r.getString("name"), r.getString("group_id"), List.of(r.getArrayOfStrings("tables")),
        r.getInteger("lease_seconds"), r.getOffsetDateTime("created_at"), from == null ? null : from.toInstant(),
        r.getLong("delivered"), r.getLong("redelivered"), r.getString("dead_letter_topic"), r.getLong("dead_letter_offset"),
        r.getString("owner_role"), r.getOffsetDateTime("last_used_at"));
  }
}
