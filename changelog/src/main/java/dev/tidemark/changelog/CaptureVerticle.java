package dev.tidemark.changelog;

import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.config.TidemarkConfig;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps capture matched to the served tables: at start and every {@code changelog.reconcile-seconds}
 * it has {@code tidemark.capture_schemas} put every table of {@code database.schemas} in the
 * publication (with REPLICA IDENTITY FULL, or DEFAULT for a table of database.key-only-tables that
 * has a primary key, and a plan trigger), and logs each table it cannot publish, with why.
 */
public final class CaptureVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(CaptureVerticle.class);
  private final TidemarkConfig config;
  private final Pool pool;
  private long timer = -1;
  private String reported = "";

  public CaptureVerticle(TidemarkConfig config, Pool pool) {
    this.config = config;
    this.pool = pool;
  }

  @Override
  public Future<?> start() {
    timer = vertx.setPeriodic(config.changelog().reconcileSeconds() * 1000, t -> reconcile());
    // capture starts with the role; a database that is down now is reconciled on the next round
    return reconcile();
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    return Future.succeededFuture();
  }

  private Future<Void> reconcile() {
    return pool.preparedQuery(CaptureSetup.RECONCILE_SQL)
        .execute(CaptureSetup.reconcileArguments(config.database()))
        .compose(rows -> {
          int touched = rows.iterator().next().getInteger(0);
          if (touched > 0) {
            LOG.debug("capture changed on {} table(s)", touched);
          }
          return pool.query(CaptureSetup.PROBLEMS_SQL).execute();
        })
        .onSuccess(rows -> {
          StringBuilder now = new StringBuilder();
          for (Row r : rows) {
            now.append(r.getString("relation")).append(": ").append(r.getString("problem")).append('\n');
          }
          if (!now.toString().equals(reported) && now.length() > 0) {
            LOG.warn("capture cannot fully follow {} table(s):\n{}", rows.size(), now.toString().stripTrailing());
          }
          reported = now.toString();
        })
        .onFailure(err -> LOG.warn("could not reconcile capture: {}", TopicVerticle.rootMessage(err)))
        .<Void>mapEmpty()
        .otherwiseEmpty();
  }
}
