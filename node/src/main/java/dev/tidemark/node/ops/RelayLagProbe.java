package dev.tidemark.node.ops;

import dev.tidemark.telemetry.metrics.RelayLag;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.util.function.BooleanSupplier;

/**
 * Measures today's relay from the outside: the changes committed after the position the relay
 * stored as published, and the age of the oldest of them. Only the node whose relay publishes
 * measures, so the gauges exist on that node alone. A capture that reports its own lag through
 * {@link RelayLag} replaces this probe.
 */
public final class RelayLagProbe {

  static final long INTERVAL_MS = 5_000;
  /** Counting stops here: a lag of this many changes already says all there is to say, and costs no more to read. */
  static final long MAX_COUNTED = 100_000;

  private static final String LAG = """
      SELECT count(*) AS waiting, coalesce((extract(epoch FROM now() - min(committed_at)) * 1000)::bigint, 0) AS age_ms
        FROM (SELECT k.committed_at
                FROM tidemark.changelog_state s
                JOIN tidemark.changelog_commit k ON k.position >= s.published_commit
                JOIN tidemark.changelog c ON c.xid = k.xid
               WHERE k.position > s.published_commit OR c.id > s.published_change
               LIMIT $1) w""";

  private RelayLagProbe() {}

  public static void start(Vertx vertx, Pool pool, BooleanSupplier publishing, RelayLag lag) {
    vertx.setPeriodic(INTERVAL_MS, t -> {
      if (publishing.getAsBoolean()) {
        pool.preparedQuery(LAG).execute(io.vertx.sqlclient.Tuple.of(MAX_COUNTED))
            .onSuccess(rows -> {
              Row r = rows.iterator().next();
              lag.report(r.getLong("waiting"), r.getLong("age_ms"));
            });
      }
    });
  }
}
