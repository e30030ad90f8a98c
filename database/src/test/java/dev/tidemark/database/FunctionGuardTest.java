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
    FunctionGuard.collect(plan, out, new TreeSet<>());
    assertEquals(Set.of("random", "pg_ls_dir", "pg_backend_pid"), out);
  }

  @Test
  void theTypesAnExpressionCastsToAreRead() {
    Set<String> functions = new TreeSet<>();
    Set<String> types = new TreeSet<>();
    FunctionGuard.scan("('5'::posint + (x)::public.\"Odd Type\"), upper((y)::text)::character varying(10), 'a::b'::text", functions, types);
    assertEquals(Set.of("posint", "Odd Type", "text", "character"), types);
    assertEquals(Set.of("upper", "varying"), functions, "a type modifier reads as a call: a name no function has, so harmless");
  }

  @Test
  void aParameterTypeIsReadAsTheTypesOwnName() {
    assertEquals("posint", FunctionGuard.typeName("public.posint"));
    assertEquals("posint", FunctionGuard.typeName("posint[]"));
    assertEquals("Odd Type", FunctionGuard.typeName("\"Odd Type\""));
    assertEquals("integer", FunctionGuard.typeName("integer"));
  }

  @Test
  void theTablesAPlanWritesAreReadWithTheirOperations() {
    io.vertx.core.json.JsonArray plans = new io.vertx.core.json.JsonArray()
        .add(new JsonObject().put("Plan", new JsonObject().put("Node Type", "ModifyTable").put("Operation", "Insert")
            .put("Conflict Resolution", "UPDATE").put("Schema", "public").put("Relation Name", "a")))
        .add(new JsonObject().put("Plan", new JsonObject().put("Node Type", "ModifyTable").put("Operation", "Insert")
            .put("Schema", "audit").put("Relation Name", "b")
            .put("Output", new io.vertx.core.json.JsonArray().add("lo_from_bytea('0'::oid, '\\x78'::bytea)"))))
        .add(new JsonObject().put("Plan", new JsonObject().put("Node Type", "ModifyTable").put("Operation", "Merge")
            .put("Schema", "public").put("Relation Name", "c")));
    FunctionGuard.Reach reach = FunctionGuard.Reach.of(plans, new String[] {"public.posint"});
    assertEquals(Set.of(new FunctionGuard.TableOp("public", "a", "i"), new FunctionGuard.TableOp("public", "a", "u"),
        new FunctionGuard.TableOp("audit", "b", "i"), new FunctionGuard.TableOp("public", "c", "i"), new FunctionGuard.TableOp("public", "c", "u"),
        new FunctionGuard.TableOp("public", "c", "d")), reach.writes());
    assertEquals(Set.of("lo_from_bytea"), reach.functions(), "a rule's second plan is read too");
    assertEquals(Set.of("oid", "bytea", "posint"), reach.types());
  }
}
