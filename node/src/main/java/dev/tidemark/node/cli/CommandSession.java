package dev.tidemark.node.cli;

import dev.tidemark.database.SqlStates;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.Pools;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * What a command run by an operator shares with the others that work on a served database: a Vert.x, Tidemark's own
 * pool, and one deadline. The pool waits for a connection as long as the command may take (its {@code --timeout}), not
 * {@code database.pool-wait-ms}, which is a node's answer to a caller in a hurry: on a busy host the command waits
 * instead of failing. PostgreSQL that is not there yet (refused, starting, out of connections) is tried again until the
 * deadline; a failure that waiting cannot mend (a wrong password, a missing login or database, a missing right) stops
 * the command at once. Either way the command ends with one sentence that names the key and the fix
 * ({@link CommandFailure}), never a bare exception.
 */
final class CommandSession implements AutoCloseable {

  /** The default of every command's {@code --timeout}. */
  static final String DEFAULT_TIMEOUT = "60s";

  private static final long RETRY_MS = 500;

  private final Vertx vertx;
  private final DatabaseConfig db;
  private final Pool pool;
  private long deadlineNanos;
  private final Duration timeout;

  private CommandSession(Vertx vertx, DatabaseConfig db, Pool pool, Duration timeout) {
    this.vertx = vertx;
    this.db = db;
    this.pool = pool;
    this.timeout = timeout;
    this.deadlineNanos = System.nanoTime() + timeout.toNanos();
  }

  /**
   * Opens Tidemark's own pool to {@code db} and returns once a connection was made, trying again while the server is
   * unreachable or busy, up to {@code timeout}.
   */
  static CommandSession open(DatabaseConfig db, Duration timeout) {
    return open(db, timeout, 2);
  }

  /** Like {@link #open(DatabaseConfig, Duration)}, with a pool of {@code connections} for a command that holds several at once. */
  static CommandSession open(DatabaseConfig db, Duration timeout, int connections) {
    Vertx vertx = Vertx.vertx();
    PoolOptions options = db.poolOptions("tidemark-cli").setMaxSize(connections)
        .setConnectionTimeout((int) Math.min(timeout.toMillis(), Integer.MAX_VALUE)).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
    Pool pool = PgBuilder.pool().with(options).connectingTo(Pools.connectOptions(db)).using(vertx).build();
    CommandSession session = new CommandSession(vertx, db, pool, timeout);
    try {
      session.await(session.firstConnection());
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
    return session;
  }

  Vertx vertx() {
    return vertx;
  }

  Pool pool() {
    return pool;
  }

  DatabaseConfig database() {
    return db;
  }

  /** Gives the command {@code more} time than --timeout, for work that bounds its own waiting (consumers delete --wait). */
  void extendBy(Duration more) {
    deadlineNanos += more.toNanos();
  }

  /** Waits for {@code work} until the command's deadline; its failure becomes a {@link CommandFailure} or is rethrown as it is. */
  <T> T await(Future<T> work) {
    long left = Math.max(1, deadlineNanos - System.nanoTime());
    try {
      return work.toCompletionStage().toCompletableFuture().get(left, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new CommandFailure("the command did not finish within " + seconds(timeout) + " (--timeout): PostgreSQL at " + db.host() + ":" + db.port()
          + " answered too slowly; run it again with a longer --timeout, or when the server is less busy");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CommandFailure("the command was interrupted; nothing more was done");
    } catch (ExecutionException | CompletionException e) {
      throw explain(e.getCause() == null ? e : e.getCause());
    }
  }

  private Future<Void> firstConnection() {
    Promise<Void> done = Promise.promise();
    tryConnect(done);
    return done.future();
  }

  private void tryConnect(Promise<Void> done) {
    pool.getConnection().compose(c -> c.close()).onSuccess(v -> done.complete()).onFailure(err -> {
      long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
      if (!notYet(err) || leftMs <= RETRY_MS) {
        done.fail(err);
      } else {
        vertx.setTimer(RETRY_MS, t -> tryConnect(done));
      }
    });
  }

  /** Whether {@code err} says PostgreSQL is not reachable or not taking connections yet, which a later try may mend. */
  static boolean notYet(Throwable err) {
    Throwable root = root(err);
    if (root instanceof PgException) {
      return SqlStates.notYetServing(root);
    }
    return root instanceof ConnectException || root instanceof NoRouteToHostException || root instanceof TimeoutException
        || root instanceof io.netty.channel.ConnectTimeoutException || dev.tidemark.database.SqlErrors.poolExhausted(root);
  }

  /** {@code err} as the sentence the operator reads: what failed, the key that decides it, and what to do. */
  RuntimeException explain(Throwable err) {
    return explain(err, db, timeout);
  }

  static RuntimeException explain(Throwable err, DatabaseConfig db, Duration timeout) {
    Throwable root = root(err);
    if (root instanceof CommandFailure || root instanceof IllegalArgumentException || root instanceof IllegalStateException
        || root instanceof picocli.CommandLine.ParameterException || root instanceof dev.tidemark.contract.ToolException) {
      return (RuntimeException) root;
    }
    String at = db.host() + ":" + db.port() + "/" + db.dbname();
    if (root instanceof PgException pg) {
      String state = pg.getSqlState() == null ? "" : pg.getSqlState();
      return switch (state) {
        case SqlStates.INVALID_PASSWORD -> new CommandFailure("PostgreSQL at " + at + " refused the password of the login " + db.user()
            + ": put the login's password in database.password-file (or database.password), or set it on the server with"
            + " ALTER ROLE " + db.user() + " PASSWORD '...'");
        case SqlStates.INVALID_AUTHORIZATION_SPECIFICATION -> new CommandFailure("PostgreSQL at " + at + " refused the login " + db.user() + " (database.user): "
            + pg.getErrorMessage() + "; create it as docs/security.md shows, or allow it in the server's pg_hba.conf");
        case SqlStates.INVALID_CATALOG_NAME -> new CommandFailure("PostgreSQL at " + db.host() + ":" + db.port() + " has no database " + db.dbname()
            + " (database.url): create it, or correct the URL");
        case SqlStates.INSUFFICIENT_PRIVILEGE -> new CommandFailure("PostgreSQL refused the login " + db.user() + " a right this command needs: "
            + pg.getErrorMessage() + "; tidemark doctor names every right Tidemark needs and the statement that grants it");
        default -> notYet(root)
            ? unreachable(db, timeout, pg.getErrorMessage())
            : new CommandFailure("PostgreSQL at " + at + " refused: " + pg.getErrorMessage() + " (SQLSTATE " + state + ")"
                + (pg.getDetail() == null ? "" : " " + pg.getDetail()) + (pg.getHint() == null ? "" : " " + pg.getHint()));
      };
    }
    if (root instanceof UnknownHostException) {
      return new CommandFailure("the host " + db.host() + " of database.url is not known here: correct the URL, or check this"
          + " machine's name resolution");
    }
    if (root instanceof SSLException) {
      return new CommandFailure("TLS to PostgreSQL at " + at + " failed: " + root.getMessage() + "; check database.ssl-mode and"
          + " database.ssl-root-cert against the server's certificate");
    }
    if (notYet(root)) {
      return unreachable(db, timeout, root.getMessage());
    }
    return new CommandFailure("the command failed: " + root.getClass().getSimpleName() + ": " + root.getMessage());
  }

  private static CommandFailure unreachable(DatabaseConfig db, Duration timeout, String why) {
    return new CommandFailure("cannot reach PostgreSQL at " + db.host() + ":" + db.port() + " (database.url) within "
        + seconds(timeout) + ": " + why + "; check that the server runs and accepts connections there, or give the command"
        + " more time with --timeout");
  }

  static Throwable root(Throwable err) {
    Throwable t = err;
    while ((t instanceof ExecutionException || t instanceof CompletionException
        || t instanceof io.vertx.core.impl.NoStackTraceThrowable && t.getCause() != null) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }

  /** Parses {@code --timeout}: a number and s or m, such as 60s or 5m. */
  static Duration parseTimeout(String value, picocli.CommandLine.Model.CommandSpec spec) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("([1-9][0-9]{0,5})(s|m)").matcher(value.trim());
    if (!m.matches()) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--timeout: use a number and s or m, such as 60s or 5m");
    }
    long n = Long.parseLong(m.group(1));
    return m.group(2).equals("s") ? Duration.ofSeconds(n) : Duration.ofMinutes(n);
  }

  @Override
  public void close() {
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // the command's work is done or failed already; a slow close changes nothing it did
    }
  }
}
