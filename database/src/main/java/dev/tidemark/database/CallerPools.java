package dev.tidemark.database;

import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Connections for callers' statements, one set per caller role, each logging in as that role.
 * PostgreSQL lets a session switch back to its session user, and to any role that user is a
 * member of, from inside any statement; when the session user is the caller's role itself, that
 * gains nothing. Tidemark's own login never runs a caller's statement. See docs/security.md.
 */
public final class CallerPools {

  /**
   * A caller role's connections: {@code pool} is reset after every call (DISCARD ALL), {@code preparing}
   * keeps statements prepared across calls (see {@link Prepared}; the same pool as {@code pool} under
   * {@link Prepared#NONE}). Each is shared out between the role's callers by its {@link FairShare}.
   */
  public record CallerDb(Pool pool, Pool preparing, KeyRingSource keys, FairShare poolShare, FairShare preparingShare) {

    /**
     * A connection of {@code from} (one of this role's pools) for a call of {@code caller}, once the
     * caller's turn came ({@link FairShare}); refused as {@link SqlErrors#connection} refuses, or
     * with the share's refusal, having run nothing.
     */
    public Future<Lent> connection(Pool from, Caller caller) {
      FairShare share = from == pool ? poolShare : preparingShare;
      return share.acquire(caller.id()).compose(release -> SqlErrors.connection(from)
          .<Lent>map(conn -> new Lent(conn, release))
          .onFailure(err -> release.run()));
    }

    /**
     * Ends what a call that failed with {@code failure} (null: it did not) could leave on {@code
     * conn}, taken from {@code from}, one of this role's pools: all of it on {@code pool}; all but
     * the prepared statements on a {@code preparing} pool of {@link Prepared#WRITES}, whose
     * statements Tidemark wrote and keeps, where a connection whose statement was dropped under it
     * is ended instead.
     */
    public Future<Void> reset(SqlConnection conn, Pool from, Throwable failure) {
      if (from == pool) {
        return CallerSessions.resetSession(conn);
      }
      return CallerSessions.endsSession(failure) ? CallerSessions.endSession(conn) : CallerSessions.resetKeepingStatements(conn);
    }

    /**
     * The value of {@code tidemark.identity} for {@code caller} on {@code conn}: what
     * {@code tidemark.caller()} returns to row-level-security policies, signed and bound to the
     * connection's backend, so that a caller's SQL can neither forge it nor use it elsewhere.
     */
    public String identity(SqlConnection conn, Caller caller, long timeoutMs) {
      int pid = PgConnection.cast(conn).processId();
      long expires = System.currentTimeMillis() + timeoutMs + IDENTITY_SLACK_MS;
      KeyRing ring = keys.ring();
      String mac = ring.sqlMac("identity|" + pid + "|" + expires + "|" + caller.name());
      return "v1|" + pid + "|" + expires + "|" + mac + "|" + caller.name();
    }
  }

  /** A connection lent to one call: {@link #close} gives it back to its pool, and the caller's turn with it. */
  public record Lent(SqlConnection conn, Runnable release) {
    public Future<Void> close() {
      return conn.close().onComplete(x -> release.run());
    }
  }

  /**
   * Added to a call's timeout for the identity's expiry: room for clock skew between a node and
   * PostgreSQL (keep their clocks in sync), and no more, so that a copied identity is soon worth nothing.
   */
  static final long IDENTITY_SLACK_MS = 60 * 1000;

  private final Vertx vertx;
  private final DatabaseConfig database;
  private final KeyRingSource keys;
  private final Prepared preparing;
  private final Map<String, CallerDb> byRole = new ConcurrentHashMap<>();

  /**
   * Whether each role also gets a pool whose connections keep statements prepared across calls,
   * and for what: statements parsed and planned once per connection, not once per call.
   */
  public enum Prepared {
    /** One pool, reset after every call. */
    NONE,
    /**
     * The query role's plain reads (CatalogCache#read): sessions read-only from their first
     * statement, with the statement timeout and without row security, never reset.
     */
    READS,
    /**
     * The command role's insert_rows, update_rows and delete_rows, which run only statements
     * Tidemark wrote (a caller's SQL runs on the pool that is reset): reset after every call, but
     * for the prepared statements (docs/security.md).
     */
    WRITES
  }

  /** @param preparing what each role's second pool keeps prepared, if it gets one */
  public CallerPools(Vertx vertx, DatabaseConfig database, KeyRingSource keys, Prepared preparing) {
    this.vertx = vertx;
    this.database = database;
    this.keys = keys;
    this.preparing = preparing;
  }

  public KeyRingSource keys() {
    return keys;
  }

  /** The connections of {@code caller}'s role; PERMISSION_DENIED when Tidemark has no login for it. */
  public CallerDb forCaller(Caller caller) {
    String role = caller.pgRole();
    CallerDb db = byRole.get(role);
    if (db != null) {
      return db;
    }
    String password = database.callerPassword(role);
    if (password == null) {
      throw new ToolException(ErrorCode.PERMISSION_DENIED, "Tidemark has no database login for your role, so no statement can run"
          + " as you. Nothing was read or changed. Ask whoever runs Tidemark to add your role's login to database.caller-passwords.");
    }
    return byRole.computeIfAbsent(role, r -> {
      Pool reset = build(r, password, Prepared.NONE);
      FairShare resetShare = share(Prepared.NONE);
      return preparing == Prepared.NONE ? new CallerDb(reset, reset, keys, resetShare, resetShare)
          : new CallerDb(reset, build(r, password, preparing), keys, resetShare, share(preparing));
    });
  }

  /** The share of one pool between the role's callers (database.caller-share-percent). */
  private FairShare share(Prepared kind) {
    return new FairShare(vertx, poolName(kind), database.poolSize(), database.perCaller(), database.poolWaitMs(), database.statementTimeoutMs());
  }

  /** The most statements a connection of {@link Prepared#WRITES} keeps prepared (the least recently used one goes first). */
  static final int PREPARED_PER_CONNECTION = 64;

  private Pool build(String role, String password, Prepared kind) {
    PgConnectOptions connect = database.connectOptions(role, password, "tidemark-caller").setCachePreparedStatements(kind != Prepared.NONE);
    if (kind == Prepared.READS) {
      // a get_row on a plain table runs here with no transaction of its own (CatalogCache#read):
      // the session itself is read-only and bounded, from its first statement on
      connect.addProperty("default_transaction_read_only", "on")
          .addProperty("statement_timeout", String.valueOf(database.statementTimeoutMs()))
          // a table that gained a policy since its shape was looked up refuses the statement (42501) instead of running the policy
          .addProperty("row_security", "off");
    }
    if (kind == Prepared.WRITES) {
      // the statements bind every value as a parameter, and PostgreSQL's default would plan the
      // catalog lookup (a custom plan costs less than its generic one there) again on every call
      connect.addProperty("plan_cache_mode", "force_generic_plan");
      // Vert.x keeps statements up to 2,048 characters by default; the catalog lookup is longer, and
      // is kept too. Longer statements built from a caller's arguments (many rows) are not, nor are
      // those whose rows take a table's row type (RowImages#decodes)
      connect.setPreparedStatementCacheSqlFilter(sql -> (sql.length() <= 2048 || TableCatalog.isLookup(sql)) && !RowImages.decodes(sql))
          .setPreparedStatementCacheMaxSize(PREPARED_PER_CONNECTION);
    }
    String name = poolName(kind);
    connect.setMetricsName(name);
    return PgBuilder.pool()
        // a call that finds every connection busy fails retriably, having run nothing (SqlErrors)
        .with(database.poolOptions(name))
        .connectingTo(connect)
        .using(vertx)
        .build();
  }

  /** Named by purpose, never by role: a pool's name is a metrics label (docs/operations.md). */
  private static String poolName(Prepared kind) {
    return switch (kind) {
      case NONE -> "callers";
      case READS -> "callers-prepared";
      case WRITES -> "callers-changes";
    };
  }

  public Future<Void> close() {
    List<Future<Void>> closing = new ArrayList<>();
    for (CallerDb db : byRole.values()) {
      closing.add(db.pool().close());
      if (db.preparing() != db.pool()) {
        closing.add(db.preparing().close());
      }
    }
    byRole.clear();
    return Future.join(closing).mapEmpty();
  }
}
