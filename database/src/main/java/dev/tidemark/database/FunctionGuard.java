package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Refuses, before a caller's statement runs, every function PostgreSQL would run for it that may
 * change something beyond the statement's own rows, wherever the call sits: in the statement, in
 * a function it calls, or in what PostgreSQL evaluates when it writes a table (CHECK constraints,
 * defaults, generated columns, domain checks, index expressions and predicates, row-level-security
 * policies, triggers, rules, views with CHECK OPTION, partition keys, and the same of every table a
 * foreign key's action cascades to). See docs/security.md for the rule and its reasons.
 *
 * <p>What a function is comes from {@code pg_proc}: a built-in is refused when PostgreSQL marks it
 * {@code VOLATILE} (it may change state) or {@code PARALLEL UNSAFE} (it may write or change the
 * transaction's state, as assigning a transaction id does), except {@link #ALLOWED}; a
 * function that runs SQL it is given ({@link #RUNS_SQL}) always; a function of the database's own
 * is followed into its body where PostgreSQL keeps that parsed (a SQL-standard body), and refused
 * where it does not (PL/pgSQL, a quoted SQL body, another language) unless the operator reviewed
 * it ({@code database.reviewed-functions}). What an object calls comes from PostgreSQL too: the
 * functions of the database it records in {@code pg_depend}, and the built-in ones (on which it
 * records no dependency) by name in the object's SQL as PostgreSQL deparses it.
 *
 * <p>What the check found harmless is remembered per component (a function name, a type, a
 * written table and operation) for {@code database.catalog-cache-ms}, until {@link #clear()}.
 */
public final class FunctionGuard {

  /**
   * Built-in functions a caller's statement may reach although PostgreSQL marks them VOLATILE or
   * PARALLEL UNSAFE: they change nothing that outlives it.
   */
  static final Set<String> ALLOWED = Set.of("random", "random_normal", "clock_timestamp", "timeofday", "gen_random_uuid",
      "uuidv4", "uuidv7", "pg_sleep", "pg_sleep_for", "pg_sleep_until", "nextval", "currval", "lastval", "array_shuffle", "array_sample",
      // what the system views pg_locks, pg_prepared_statements, pg_cursors, pg_prepared_xacts, pg_settings,
      // pg_stat_activity and pg_replication_slots read: they only look
      "pg_lock_status", "pg_blocking_pids", "pg_safe_snapshot_blocking_pids", "pg_prepared_statement", "pg_cursor",
      "pg_prepared_xact", "pg_show_all_settings", "pg_stat_get_activity", "pg_get_replication_slots",
      // trigger functions that only compute or skip the row being written
      "tsvector_update_trigger", "tsvector_update_trigger_column", "suppress_redundant_updates_trigger",
      // parallel unsafe, but they only read: the search path, and a transaction id already assigned
      "current_schema", "current_schemas", "txid_current_if_assigned", "pg_current_xact_id_if_assigned");

  /** The uuid-ossp extension's generators, in whatever schema it was installed. */
  static final Set<String> ALLOWED_ANYWHERE = Set.of("uuid_generate_v1", "uuid_generate_v1mc", "uuid_generate_v4");

  /** Functions that run SQL they are given, whatever their marks: no plan or catalog shows that SQL. */
  static final Set<String> RUNS_SQL = Set.of("query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema",
      "cursor_to_xml", "cursor_to_xmlschema", "table_to_xml", "table_to_xmlschema", "table_to_xml_and_xmlschema",
      "schema_to_xml", "schema_to_xmlschema", "schema_to_xml_and_xmlschema", "database_to_xml", "database_to_xmlschema",
      "database_to_xml_and_xmlschema", "ts_stat", "ts_rewrite", "dblink", "dblink_exec", "dblink_open", "dblink_fetch",
      "dblink_send_query", "dblink_get_result", "dblink_connect", "dblink_connect_u");

  /** A string literal as PostgreSQL deparses one (standard_conforming_strings): dropped before names are read. */
  static final String LITERAL = "'(?:[^']|'')*'";
  /** A called name as PostgreSQL deparses it: an identifier, perhaps double-quoted, followed by an opening parenthesis. */
  static final String CALL = "(\"(?:[^\"]|\"\")+\"|[[:alpha:]_][[:alnum:]_$]*)\\s*\\(";

  /** Whether the function {@code p} (in schema {@code n}) is the database's own and its body is parsed, so that it is followed. */
  private static final String OPEN = """
      p.oid >= 16384 AND n.nspname <> 'tidemark' AND p.provolatile <> 'v' AND (p.prosqlbody IS NOT NULL OR p.prokind = 'a')
      AND NOT (n.nspname || '.' || p.proname = ANY($6::text[]) OR n.nspname || '.*' = ANY($6::text[]))
      AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')""";

  /**
   * Every function each component reaches that is refused, with the object it is reached
   * through and why. Components: $1 function names a statement calls ({@code f:}), $2 type names
   * it casts to or binds ({@code t:}), $3..$5 tables it writes with the operation, i, u or d
   * ({@code w:}), $12 tables a migration created or altered, of which only the objects the current
   * transaction (whose id is $13) wrote count ({@code m:}). $6 the reviewed functions, $7
   * {@link #RUNS_SQL}, $8 {@link #ALLOWED}, $9 {@link #ALLOWED_ANYWHERE}, $10 {@link #LITERAL},
   * $11 {@link #CALL}.
   */
  static final String REACH_SQL = """
      WITH RECURSIVE
      written(comp, relid, op) AS (
          SELECT 'w:' || s.nsp || '.' || s.rel || ':' || s.op, c.oid, s.op
            FROM unnest($3::text[], $4::text[], $5::text[]) AS s(nsp, rel, op)
            JOIN pg_namespace n ON n.nspname = s.nsp JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.rel
        UNION
          SELECT w.comp, x.relid, x.op FROM written w CROSS JOIN LATERAL (
              SELECT i.inhrelid, w.op FROM pg_inherits i WHERE i.inhparent = w.relid AND w.op <> 'r'
            UNION ALL
              SELECT k.conrelid, CASE WHEN w.op = 'd' AND k.confdeltype = 'c' THEN 'd' ELSE 'u' END
                FROM pg_constraint k
               WHERE k.contype = 'f' AND k.confrelid = w.relid
                 AND (w.op = 'd' AND k.confdeltype IN ('c', 'n', 'd') OR w.op = 'u' AND k.confupdtype IN ('c', 'n', 'd'))
            UNION ALL
              SELECT d.refobjid, o.op
                FROM pg_rewrite r
                JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
                                AND d.deptype = 'n'
                CROSS JOIN LATERAL (SELECT w.op WHERE r.ev_type = '1'
                                    UNION ALL SELECT unnest(ARRAY['i', 'u', 'd']) WHERE r.ev_type <> '1') o(op)
               WHERE r.ev_class = w.relid AND d.refobjid <> w.relid AND w.op <> 'r'
                 AND (r.ev_type <> '1' OR (SELECT c.relkind FROM pg_class c WHERE c.oid = w.relid) = 'v')) x(relid, op)
      ),
      seed(comp, kind, classid, objid) AS (
          SELECT w.comp, x.kind, x.classid, x.objid FROM written w CROSS JOIN LATERAL (
              -- a relation read: its query (a view's), its policies
              SELECT 'expr', 'pg_rewrite'::regclass, r.oid FROM pg_rewrite r WHERE r.ev_class = w.relid AND w.op = 'r'
            UNION ALL
              SELECT 'using', 'pg_policy'::regclass, p.oid FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
               WHERE p.polrelid = w.relid AND w.op = 'r' AND c.relrowsecurity AND p.polcmd IN ('*', 'r')
            UNION ALL
              SELECT 'expr', 'pg_constraint'::regclass, k.oid FROM pg_constraint k
               WHERE k.conrelid = w.relid AND k.contype = 'c' AND w.op NOT IN ('d', 'r')
            UNION ALL
              SELECT 'expr', 'pg_attrdef'::regclass, a.oid FROM pg_attrdef a WHERE a.adrelid = w.relid AND w.op NOT IN ('d', 'r')
            UNION ALL
              SELECT 'expr', 'pg_class'::regclass, x.indexrelid FROM pg_index x WHERE x.indrelid = w.relid AND w.op NOT IN ('d', 'r')
            UNION ALL
              SELECT 'type', 'pg_type'::regclass, a.atttypid FROM pg_attribute a
               WHERE a.attrelid = w.relid AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid >= 16384 AND w.op NOT IN ('d', 'r')
            UNION ALL
              SELECT 'self', 'pg_class'::regclass, w.relid WHERE w.op NOT IN ('d', 'r')
            UNION ALL
              SELECT 'expr', 'pg_trigger'::regclass, t.oid FROM pg_trigger t
               WHERE t.tgrelid = w.relid AND NOT t.tgisinternal AND t.tgenabled <> 'D'
                 AND (t.tgtype::int & CASE w.op WHEN 'i' THEN 4 WHEN 'd' THEN 8 WHEN 'u' THEN 16 ELSE 0 END) <> 0
            UNION ALL
              SELECT CASE w.op WHEN 'd' THEN 'using' ELSE 'expr' END, 'pg_policy'::regclass, p.oid
                FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid AND c.relrowsecurity
               WHERE p.polrelid = w.relid AND w.op <> 'r'
                 AND p.polcmd IN ('*', 'r', CASE w.op WHEN 'i' THEN 'a' WHEN 'u' THEN 'w' ELSE 'd' END)
            UNION ALL
              SELECT 'expr', 'pg_rewrite'::regclass, r.oid FROM pg_rewrite r WHERE r.ev_class = w.relid AND w.op <> 'r'
            UNION ALL
              SELECT 'expr', 'pg_rewrite'::regclass, r.oid
                FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid JOIN pg_class v ON v.oid = r.ev_class
               WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = w.relid AND d.classid = 'pg_rewrite'::regclass
                 AND w.op NOT IN ('d', 'r')
                 AND v.reloptions::text[] && ARRAY['check_option=local', 'check_option=cascaded']) x(kind, classid, objid)
        UNION ALL
          SELECT 'm:' || c.oid, x.kind, x.classid, x.objid
            FROM pg_class c CROSS JOIN LATERAL (
                SELECT 'expr', 'pg_constraint'::regclass, k.oid, k.xmin FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'c'
              UNION ALL
                SELECT 'expr', 'pg_attrdef'::regclass, a.oid, a.xmin FROM pg_attrdef a WHERE a.adrelid = c.oid
              UNION ALL
                SELECT 'expr', 'pg_class'::regclass, x.indexrelid, x.xmin FROM pg_index x WHERE x.indrelid = c.oid
              UNION ALL
                SELECT 'type', 'pg_type'::regclass, a.atttypid, a.xmin FROM pg_attribute a
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid >= 16384
              UNION ALL
                SELECT 'self', 'pg_class'::regclass, p.partrelid, p.xmin FROM pg_partitioned_table p WHERE p.partrelid = c.oid
            ) x(kind, classid, objid, xmin)
           WHERE c.oid = ANY($12::int8[]::oid[]) AND age(x.xmin) <= age($13::text::xid)
        UNION ALL
          SELECT 'f:' || f.name, 'proc', 'pg_proc'::regclass, p.oid FROM unnest($1::text[]) f(name) JOIN pg_proc p ON p.proname = f.name
        UNION ALL
          SELECT 't:' || y.name, 'type', 'pg_type'::regclass, t.oid FROM unnest($2::text[]) y(name) JOIN pg_type t ON t.typname = y.name
      ),
      reach(comp, via, root, kind, classid, objid) AS (
          SELECT s.comp, pg_describe_object(s.classid, s.objid, 0), s.objid, s.kind, s.classid, s.objid FROM seed s
        UNION
          SELECT r.comp, r.via, r.root, x.kind, x.classid, x.objid
            FROM reach r
            CROSS JOIN LATERAL (SELECT r.kind = 'proc' AND EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                                                                   WHERE p.oid = r.objid AND %1$s) AS open) f
            CROSS JOIN LATERAL (
                -- built-in functions, by name in the object's SQL as PostgreSQL deparses it: it records no dependency on them
                SELECT 'proc', 'pg_proc'::regclass, p.oid
                  FROM regexp_matches(regexp_replace(CASE
                           WHEN r.classid = 'pg_constraint'::regclass THEN pg_get_constraintdef(r.objid)
                           WHEN r.classid = 'pg_attrdef'::regclass
                             THEN (SELECT pg_get_expr(a.adbin, a.adrelid) FROM pg_attrdef a WHERE a.oid = r.objid)
                           WHEN r.kind = 'expr' AND r.classid = 'pg_class'::regclass THEN pg_get_indexdef(r.objid)
                           WHEN r.kind = 'self' THEN pg_get_partkeydef(r.objid)
                           WHEN r.classid = 'pg_trigger'::regclass THEN pg_get_triggerdef(r.objid)
                           WHEN r.classid = 'pg_policy'::regclass
                             THEN (SELECT concat_ws(' ', pg_get_expr(p.polqual, p.polrelid),
                                                    CASE WHEN r.kind = 'expr' THEN pg_get_expr(p.polwithcheck, p.polrelid) END)
                                     FROM pg_policy p WHERE p.oid = r.objid)
                           WHEN r.classid = 'pg_rewrite'::regclass THEN pg_get_ruledef(r.objid)
                           WHEN r.kind = 'type' THEN (SELECT pg_get_expr(t.typdefaultbin, 0) FROM pg_type t WHERE t.oid = r.objid)
                           WHEN f.open THEN pg_get_function_sqlbody(r.objid)
                         END, $10::text, '''''', 'g'), $11::text, 'g') AS m
                  JOIN pg_proc p ON p.oid < 16384
                   AND p.proname = CASE WHEN left(m[1], 1) = '"' THEN replace(substr(m[1], 2, length(m[1]) - 2), '""', '"') ELSE m[1] END
              UNION ALL
                -- the database's own objects the object uses, as PostgreSQL recorded them
                SELECT CASE d.refclassid WHEN 'pg_proc'::regclass THEN 'proc' WHEN 'pg_type'::regclass THEN 'type'
                         WHEN 'pg_operator'::regclass THEN 'oper' ELSE 'read' END, d.refclassid, d.refobjid
                  FROM pg_depend d
                 WHERE d.classid = r.classid AND d.objid = r.objid AND d.deptype = 'n'
                   AND d.refclassid IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_operator'::regclass, 'pg_class'::regclass)
                   AND (r.kind IN ('expr', 'using', 'type', 'oper') OR r.kind = 'self' AND d.objsubid = 0 OR f.open)
              UNION ALL
                -- a domain's checks, an array's element type
                SELECT 'expr', 'pg_constraint'::regclass, k.oid FROM pg_constraint k WHERE r.kind = 'type' AND k.contypid = r.objid
              UNION ALL
                SELECT 'type', 'pg_type'::regclass, t.typelem FROM pg_type t
                 WHERE r.kind = 'type' AND t.oid = r.objid AND t.typelem <> 0 AND t.typlen = -1
              UNION ALL
                -- a relation read: a view's query, a table's policies
                SELECT 'expr', 'pg_rewrite'::regclass, w.oid FROM pg_rewrite w WHERE r.kind = 'read' AND w.ev_class = r.objid
              UNION ALL
                SELECT 'using', 'pg_policy'::regclass, p.oid FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
                 WHERE r.kind = 'read' AND p.polrelid = r.objid AND c.relrowsecurity AND p.polcmd IN ('*', 'r')) x(kind, classid, objid)
      )
      SELECT DISTINCT r.comp, r.via, r.objid = r.root AS direct, v.name, v.reason
        FROM (SELECT DISTINCT comp, via, root, objid FROM reach WHERE kind = 'proc') r
        CROSS JOIN LATERAL (
          SELECT n.nspname || '.' || p.proname AS name,
                 CASE
                   WHEN n.nspname = 'tidemark' OR n.nspname || '.' || p.proname = ANY($6::text[]) OR n.nspname || '.*' = ANY($6::text[])
                     THEN NULL
                   WHEN p.proname = ANY($7::text[]) THEN 'runs_sql'
                   WHEN p.oid < 16384 OR EXISTS (SELECT 1 FROM pg_depend e
                                                  WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')
                     THEN CASE
                       WHEN p.proname = ANY($8::text[]) AND n.nspname = 'pg_catalog' OR p.proname = ANY($9::text[]) THEN NULL
                       WHEN p.provolatile = 'v' THEN 'volatile'
                       WHEN p.proparallel = 'u' AND p.oid < 16384 THEN 'transaction'
                     END
                   WHEN p.prokind = 'a' THEN NULL
                   WHEN p.provolatile = 'v' THEN 'volatile'
                   WHEN p.prosqlbody IS NULL THEN 'opaque'
                 END AS reason
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
           WHERE p.oid = r.objid OFFSET 0) v
       WHERE v.reason IS NOT NULL""".formatted(OPEN);

  /** What each reason means, for the caller. */
  private static final Map<String, String> REASONS = Map.of(
      "volatile", "may change state beyond the statement (it is VOLATILE)",
      "transaction", "assigns a transaction id or changes the transaction's state (PostgreSQL marks it PARALLEL UNSAFE)",
      "runs_sql", "runs SQL of its own that no plan shows",
      "opaque", "keeps its body as text PostgreSQL does not parse ahead (PL/pgSQL, a quoted SQL body or another language),"
          + " so what it calls cannot be read");

  /** The most refusals a message names; the details name every function. */
  static final int MAX_NAMED = 8;

  /**
   * One route to a refused function: the component it was found from, the object PostgreSQL
   * evaluates (as pg_describe_object names it), whether that object is the function itself, the
   * function (schema.name), and why it is refused.
   */
  public record Refusal(String component, String via, boolean direct, String function, String reason) {

    /** Whether the route goes through a table's definition rather than what the statement itself calls. */
    boolean throughTable() {
      return component.startsWith("w:");
    }

    /** The table a {@code w:} component writes, as schema.name. */
    String table() {
      return component.substring(2, component.lastIndexOf(':'));
    }

    /** The route and the reason, for a message. */
    public String describe() {
      return (direct ? function : via + " calls " + function) + ", which " + REASONS.get(reason);
    }
  }

  /** A table a statement writes (operation i, u or d) or reads through a statement of Tidemark's own (r): schema, name, operation. */
  public record TableOp(String schema, String table, String op) {}

  /**
   * What a statement reaches, as read from its plans: the function names its expressions call,
   * the type names it casts to or binds values of, and the tables it writes.
   */
  public record Reach(Set<String> functions, Set<String> types, Set<TableOp> writes) {

    /** Nothing at all. */
    public static Reach none() {
      return new Reach(Set.of(), Set.of(), Set.of());
    }

    /** A statement Tidemark built that reads {@code table}: a view's query, the table's policies. */
    public static Reach reading(String schema, String table) {
      return writing(schema, table, "r");
    }

    /** A statement Tidemark built that writes {@code table} with each of {@code ops} (i, u, d). */
    public static Reach writing(String schema, String table, String... ops) {
      Set<TableOp> writes = new LinkedHashSet<>();
      for (String op : ops) {
        writes.add(new TableOp(schema, table, op));
      }
      return new Reach(Set.of(), Set.of(), writes);
    }

    /**
     * What the plans of an {@code EXPLAIN (FORMAT JSON, VERBOSE)} answer reach (a rule may add
     * plans after the first), with the statement's parameter types.
     */
    public static Reach of(JsonArray plans, String[] paramTypes) {
      Set<String> functions = new TreeSet<>();
      Set<String> types = new TreeSet<>();
      Set<TableOp> writes = new LinkedHashSet<>();
      for (Object plan : plans) {
        collect(plan, functions, types);
        if (plan instanceof JsonObject p) {
          modified(p.getJsonObject("Plan"), writes);
        }
      }
      if (paramTypes != null) {
        for (String t : paramTypes) {
          if (t != null) {
            types.add(typeName(t));
          }
        }
      }
      return new Reach(functions, types, writes);
    }

    /** Each part's key, as the query names its component. */
    List<String> components() {
      List<String> out = new ArrayList<>();
      functions.forEach(f -> out.add(key("f:", f)));
      types.forEach(t -> out.add(key("t:", t)));
      writes.forEach(w -> out.add(key("w:", w)));
      return out;
    }

    static String key(String prefix, Object part) {
      return part instanceof TableOp w ? prefix + w.schema() + "." + w.table() + ":" + w.op() : prefix + part;
    }
  }

  private final Pool pool;
  private final List<String> reviewed;
  private final long ttlNanos;
  private final Map<String, Long> harmless = new ConcurrentHashMap<>();
  /** Counts the clears, so that a lookup that began before one is not kept after it. */
  private final AtomicLong generation = new AtomicLong();

  /**
   * @param pool Tidemark's own login, which reads the catalog (the same for every caller) with its
   *     statements kept prepared: a caller's session is reset after its call, and planning the
   *     lookup cost more than running it
   * @param reviewed functions the operator reviewed (database.reviewed-functions): schema.name, or
   *     schema.* for every function of a schema
   * @param ttlMs how long a component found harmless is taken as harmless (database.catalog-cache-ms)
   */
  public FunctionGuard(Pool pool, List<String> reviewed, long ttlMs) {
    this.pool = pool;
    this.reviewed = List.copyOf(reviewed);
    this.ttlNanos = ttlMs * 1_000_000L;
  }

  /** Forgets what was found harmless: the schema changed. */
  public void clear() {
    generation.incrementAndGet();
    harmless.clear();
  }

  /**
   * Completes when nothing {@code reach} reaches is refused; otherwise fails, before anything of
   * the statement ran. What the statement itself calls is refused with {@code code} (the caller
   * can rewrite it); what a table it writes would run is PERMISSION_DENIED (nothing the caller
   * sends avoids it). Both name the functions and the route to each.
   */
  public Future<Void> check(Reach reach, ErrorCode code, String argument) {
    long now = System.nanoTime();
    Reach unknown = new Reach(unknown(reach.functions(), "f:", now), unknown(reach.types(), "t:", now),
        unknown(reach.writes(), "w:", now));
    if (unknown.functions().isEmpty() && unknown.types().isEmpty() && unknown.writes().isEmpty()) {
      return Future.succeededFuture();
    }
    long started = generation.get();
    return refusals(pool, unknown, List.of(), null).compose(refused -> {
      Set<String> refusedComponents = new TreeSet<>();
      refused.forEach(r -> refusedComponents.add(r.component()));
      if (ttlNanos > 0 && generation.get() == started) {
        for (String component : unknown.components()) {
          if (!refusedComponents.contains(component)) {
            harmless.put(component, now);
          }
        }
      }
      return refused.isEmpty() ? Future.succeededFuture() : Future.failedFuture(refusal(refused, code, argument));
    });
  }

  /** The members of {@code all} not found harmless within the time to live. */
  private <T> Set<T> unknown(Set<T> all, String prefix, long now) {
    Set<T> out = new LinkedHashSet<>();
    for (T item : all) {
      Long at = harmless.get(Reach.key(prefix, item));
      if (at == null || now - at > ttlNanos) {
        out.add(item);
      }
    }
    return out;
  }

  /**
   * Every refused function that the CHECK constraints, defaults, generated columns, indexes,
   * partition keys and column types of {@code relids}, as written by the current transaction
   * ({@code xid}), reach: what a migration created, read in its own transaction on {@code conn},
   * never remembered.
   */
  public Future<List<Refusal>> created(SqlConnection conn, List<Long> relids, String xid) {
    return refusals(conn, Reach.none(), relids, xid);
  }

  private Future<List<Refusal>> refusals(SqlClient client, Reach reach, List<Long> migrated, String xid) {
    List<String> schemas = new ArrayList<>();
    List<String> tables = new ArrayList<>();
    List<String> ops = new ArrayList<>();
    for (TableOp w : reach.writes()) {
      schemas.add(w.schema());
      tables.add(w.table());
      ops.add(w.op());
    }
    Tuple params = Tuple.tuple()
        .addArrayOfString(reach.functions().toArray(new String[0]))
        .addArrayOfString(reach.types().toArray(new String[0]))
        .addArrayOfString(schemas.toArray(new String[0]))
        .addArrayOfString(tables.toArray(new String[0]))
        .addArrayOfString(ops.toArray(new String[0]))
        .addArrayOfString(reviewed.toArray(new String[0]))
        .addArrayOfString(RUNS_SQL.toArray(new String[0]))
        .addArrayOfString(ALLOWED.toArray(new String[0]))
        .addArrayOfString(ALLOWED_ANYWHERE.toArray(new String[0]))
        .addString(LITERAL)
        .addString(CALL)
        .addArrayOfLong(migrated.toArray(new Long[0]))
        .addString(xid);
    return client.preparedQuery(REACH_SQL).execute(params).map(rows -> {
      List<Refusal> out = new ArrayList<>();
      for (Row r : rows) {
        out.add(new Refusal(r.getString("comp"), r.getString("via"), r.getBoolean("direct"), r.getString("name"), r.getString("reason")));
      }
      out.sort(java.util.Comparator.comparing(Refusal::component).thenComparing(Refusal::via).thenComparing(Refusal::function));
      return out;
    });
  }

  /**
   * The failure for {@code refused}: PERMISSION_DENIED when any route goes through a table it
   * writes, {@code code} when the statement itself calls what is refused.
   */
  static ToolException refusal(List<Refusal> refused, ErrorCode code, String argument) {
    List<Refusal> tables = refused.stream().filter(Refusal::throughTable).toList();
    List<Refusal> shown = tables.isEmpty() ? refused : tables;
    JsonObject details = details(shown).put("argument", argument);
    if (!tables.isEmpty()) {
      Set<String> written = new TreeSet<>();
      tables.forEach(r -> written.add(r.table()));
      details.put("tables", new JsonArray(List.copyOf(written)));
      boolean reads = tables.stream().allMatch(r -> r.component().endsWith(":r"));
      return new ToolException(ErrorCode.PERMISSION_DENIED, (reads ? "Reading " : "Writing ") + String.join(", ", written)
          + " makes PostgreSQL run functions Tidemark never runs for a caller: " + describe(shown) + ". Tidemark "
          + (reads ? "reads" : "writes") + " such a table only once its definition no longer reaches them, or the operator has"
          + " reviewed the function (database.reviewed-functions). Nothing was " + (reads ? "read." : "written."), details);
    }
    return new ToolException(code, "The statement calls functions Tidemark never runs for a caller: " + describe(shown)
        + ". Statements may call only functions that change nothing beyond them, and of the built-in ones PostgreSQL marks volatile"
        + " or parallel unsafe only " + String.join(", ", new TreeSet<>(ALLOWED)) + ". Rewrite the statement without them."
        + " Nothing was run.", details);
  }

  /** {@code functions} and {@code via}: every refused function and every object through which one is reached. */
  public static JsonObject details(List<Refusal> refused) {
    Set<String> functions = new TreeSet<>();
    Set<String> via = new TreeSet<>();
    refused.forEach(r -> {
      functions.add(r.function());
      via.add(r.via());
    });
    return new JsonObject().put("functions", new JsonArray(List.copyOf(functions))).put("via", new JsonArray(List.copyOf(via)));
  }

  /** The routes of {@code refused}, each once, at most {@link #MAX_NAMED} of them. */
  public static String describe(List<Refusal> refused) {
    List<String> named = new ArrayList<>();
    for (Refusal r : refused) {
      String text = r.describe();
      if (!named.contains(text)) {
        named.add(text);
      }
    }
    return String.join("; ", named.subList(0, Math.min(MAX_NAMED, named.size())))
        + (named.size() > MAX_NAMED ? "; and " + (named.size() - MAX_NAMED) + " more" : "");
  }

  /** The tables each ModifyTable node of {@code node}'s plan writes, with their operations, depth first. */
  private static void modified(JsonObject node, Set<TableOp> out) {
    if (node == null) {
      return;
    }
    if ("ModifyTable".equals(node.getString("Node Type")) && node.getString("Relation Name") != null) {
      String schema = node.getString("Schema", "public");
      String table = node.getString("Relation Name");
      String operation = node.getString("Operation", "");
      List<String> ops = switch (operation) {
        case "Insert" -> "UPDATE".equals(node.getString("Conflict Resolution")) ? List.of("i", "u") : List.of("i");
        case "Update" -> List.of("u");
        case "Delete" -> List.of("d");
        default -> List.of("i", "u", "d");  // MERGE
      };
      ops.forEach(op -> out.add(new TableOp(schema, table, op)));
    }
    JsonArray children = node.getJsonArray("Plans");
    if (children != null) {
      for (Object child : children) {
        modified((JsonObject) child, out);
      }
    }
  }

  /** The name of a type as {@code regtype} writes it (perhaps qualified, quoted, an array): the type's own name. */
  static String typeName(String regtype) {
    Set<String> types = new TreeSet<>();
    scan("::" + (regtype.endsWith("[]") ? regtype.substring(0, regtype.length() - 2) : regtype), new TreeSet<>(), types);
    return types.isEmpty() ? regtype : types.iterator().next();
  }

  /** Every name the plan's expressions call and every type they cast to, depth first through sub-plans. */
  static void collect(Object node, Set<String> names, Set<String> types) {
    if (node instanceof JsonObject o) {
      for (Map.Entry<String, Object> e : o) {
        collect(e.getValue(), names, types);
      }
    } else if (node instanceof JsonArray a) {
      for (Object v : a) {
        collect(v, names, types);
      }
    } else if (node instanceof String s) {
      scan(s, names, types);
    }
  }

  /** The names of the functions called in one expression as PostgreSQL deparses it; see {@link #scan}. */
  static void calledNames(String expr, Set<String> names) {
    scan(expr, names, new TreeSet<>());
  }

  /**
   * Reads one expression as PostgreSQL deparses it: a called name is an identifier, perhaps
   * schema-qualified, perhaps double-quoted, followed by an opening parenthesis; a type cast to is
   * the identifier after {@code ::}. Both outside string literals; unquoted names are lower case in
   * PostgreSQL's output.
   */
  static void scan(String expr, Set<String> names, Set<String> types) {
    int n = expr.length();
    int i = 0;
    String last = null;
    boolean cast = false;
    while (i < n) {
      char c = expr.charAt(i);
      if (c == '\'') {
        i = skipQuoted(expr, i, '\'');
        last = null;
        cast = false;
      } else if (c == '"') {
        int end = skipQuoted(expr, i, '"');
        last = expr.substring(i + 1, end - 1).replace("\"\"", "\"");
        i = end;
        cast = cast(types, last, cast, expr, i);
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(expr.charAt(i)) || expr.charAt(i) == '_' || expr.charAt(i) == '$')) {
          i++;
        }
        last = expr.substring(start, i).toLowerCase(Locale.ROOT);
        cast = cast(types, last, cast, expr, i);
      } else if (c == '.' && last != null) {
        i++;  // schema.name: the name that follows is the one called
      } else if (c == ':' && i + 1 < n && expr.charAt(i + 1) == ':') {
        i += 2;
        last = null;
        cast = true;
      } else if (c == '(') {
        if (last != null) {
          names.add(last);
        }
        last = null;
        cast = false;
        i++;
      } else if (Character.isWhitespace(c)) {
        i++;
      } else {
        last = null;
        cast = false;
        i++;
      }
    }
  }

  /** After {@code ::}: the name read is a type's unless a dot follows (then it is the schema, and the type comes next). */
  private static boolean cast(Set<String> types, String name, boolean cast, String expr, int at) {
    if (!cast) {
      return false;
    }
    if (at < expr.length() && expr.charAt(at) == '.') {
      return true;
    }
    types.add(name);
    return false;
  }

  /** The index just past the literal or identifier opened by {@code quote} at {@code start}; a doubled quote stays inside. */
  private static int skipQuoted(String s, int start, char quote) {
    int i = start + 1;
    while (i < s.length()) {
      if (s.charAt(i) == quote) {
        if (i + 1 < s.length() && s.charAt(i + 1) == quote) {
          i += 2;
          continue;
        }
        return i + 1;
      }
      i++;
    }
    return s.length();
  }
}
