package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class FunctionGuardTest {

  private static Set<String> names(String expr) {
    Set<String> out = new TreeSet<>();
    FunctionGuard.calledNames(expr, out);
    return out;
  }

  @Test
  void findsEveryCallOfAnExpressionAsPostgresqlDeparsesIt() {
    assertEquals(Set.of("pg_advisory_xact_lock", "pg_sleep"), names("pg_advisory_xact_lock('8388262611043690597'::bigint), pg_sleep('3'::double precision)"));
    assertEquals(Set.of("set_config", "query_to_xml"), names("set_config('role'::text, 'none'::text, true), query_to_xml('select 1'::text, false, false, ''::text)"));
    assertEquals(Set.of("lo_export"), names("public.lo_export(x.oid, '/tmp/x'::text)"), "the called name is the one after the schema");
    assertEquals(Set.of("Odd Name"), names("\"Odd Name\"(1)"), "a quoted name keeps its case and spaces");
    assertEquals(Set.of("count"), names("count(*)"));
  }

  @Test
  void textInsideStringLiteralsIsNeverTakenForACall() {
    assertEquals(Set.of("upper"), names("upper('pg_terminate_backend(1) it''s not a call'::text)"));
    assertEquals(Set.of(), names("'set_config('::text"));
  }

  @Test
  void namesAreCollectedFromEveryNodeAndField() {
    JsonObject plan = new JsonObject().put("Node Type", "Result")
        .put("Output", new io.vertx.core.json.JsonArray().add("random()"))
        .put("Plans", new io.vertx.core.json.JsonArray().add(new JsonObject().put("Node Type", "Function Scan")
            .put("Function Call", "pg_ls_dir('.'::text)").put("Filter", "(x > pg_backend_pid())")));
    Set<String> out = new TreeSet<>();
    FunctionGuard.collect(plan, out);
    assertEquals(Set.of("random", "pg_ls_dir", "pg_backend_pid"), out);
  }
}
