package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.spec.McpHeaders;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ParamHeadersTest {

  private static JsonObject marked(String type, String header) {
    return new JsonObject().put("type", type).put(ParamHeaders.ANNOTATION, header);
  }

  /** region (string), limit (integer), dry_run (boolean) and target.zone (a nested string) are mirrored. */
  private static final JsonObject SCHEMA = new JsonObject().put("type", "object").put("properties", new JsonObject()
      .put("region", marked("string", "Region"))
      .put("limit", marked("integer", "Limit"))
      .put("dry_run", marked("boolean", "DryRun"))
      .put("target", new JsonObject().put("type", "object").put("properties", new JsonObject().put("zone", marked("string", "Zone"))))
      .put("query", new JsonObject().put("type", "string")));

  private static final ParamHeaders HEADERS = new ParamHeaders(Map.of("run", SCHEMA, "plain", new JsonObject().put("type", "object")));

  private static MultiMap headers(String... pairs) {
    MultiMap h = MultiMap.caseInsensitiveMultiMap();
    for (int i = 0; i < pairs.length; i += 2) {
      h.add(pairs[i], pairs[i + 1]);
    }
    return h;
  }

  private static String b64(String s) {
    return "=?base64?" + Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8)) + "?=";
  }

  @Test
  void theMarkedParametersAreFoundThroughPropertiesAtAnyDepth() {
    assertEquals(List.of(List.of("region"), List.of("limit"), List.of("dry_run"), List.of("target", "zone")),
        HEADERS.params("run").stream().map(ParamHeaders.Param::path).toList());
    assertTrue(HEADERS.params("plain").isEmpty());
    assertTrue(HEADERS.params("no_such_tool").isEmpty());
  }

  @Test
  void headersThatMirrorTheArgumentsFit() {
    JsonObject args = new JsonObject().put("region", "us-west1").put("limit", 42).put("dry_run", false)
        .put("target", new JsonObject().put("zone", "b")).put("query", "SELECT 1");
    assertNull(HEADERS.mismatch("run", args, headers("Mcp-Param-Region", "us-west1", "mcp-param-limit", "42",
        "MCP-PARAM-DRYRUN", "false", "Mcp-Param-Zone", "b")));
    assertNull(HEADERS.mismatch("run", args, headers("Mcp-Param-Region", "  us-west1\t", "Mcp-Param-Limit", "42.0",
        "Mcp-Param-DryRun", "false", "Mcp-Param-Zone", b64("b"))), "whitespace around a value, an integer written 42.0, base64");
    assertNull(HEADERS.mismatch("run", new JsonObject().put("query", "x"), headers()), "no marked argument, no header");
    assertNull(HEADERS.mismatch("run", new JsonObject().put("region", null), headers()), "a null argument needs no header");
    assertNull(HEADERS.mismatch("run", new JsonObject().put("region", "Hello, 世界"),
        headers("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?=")), "the revision's own example");
    assertNull(HEADERS.mismatch("run", new JsonObject().put("region", "=?base64?SGVsbG8"),
        headers("Mcp-Param-Region", "=?base64?SGVsbG8")), "a value without the suffix is literal");
    assertNull(HEADERS.mismatch("plain", new JsonObject(), headers("Mcp-Param-Other", "x")), "headers no tool declares are ignored");
  }

  @Test
  void aMissingExtraUnequalOrUndecodableHeaderIsAMismatchThatNamesTheHeaderButNotTheValue() {
    JsonObject args = new JsonObject().put("region", "us-west1");
    String missing = HEADERS.mismatch("run", args, headers());
    assertNotNull(missing);
    assertTrue(missing.contains("Mcp-Param-Region is missing") && missing.contains("arguments.region"), missing);
    assertTrue(HEADERS.mismatch("run", new JsonObject(), headers("Mcp-Param-Region", "us-west1")).contains("has no value"));
    String unequal = HEADERS.mismatch("run", args, headers("Mcp-Param-Region", "eu-north1"));
    assertTrue(unequal.contains("does not equal arguments.region"), unequal);
    assertFalse(unequal.contains("eu-north1") || unequal.contains("us-west1"), "values are never repeated: " + unequal);
    assertNotNull(HEADERS.mismatch("run", args, headers("Mcp-Param-Region", "US-WEST1")), "values are case-sensitive");
    assertTrue(HEADERS.mismatch("run", args, headers("Mcp-Param-Region", "us-west1", "Mcp-Param-Region", "us-west1"))
        .contains("at most one"));
    assertTrue(HEADERS.mismatch("run", args, headers("Mcp-Param-Region", "=?base64?dXMtd2VzdDE?=")).contains("not valid base64"),
        "padding is required");
    assertTrue(HEADERS.mismatch("run", args, headers("Mcp-Param-Region", "=?base64?dXMt!!d2VzdDE=?=")).contains("not valid base64"));
    assertTrue(HEADERS.mismatch("run", new JsonObject().put("region", "é"), headers("Mcp-Param-Region", "é"))
        .contains("characters a header value may not"));
    assertNotNull(HEADERS.mismatch("run", new JsonObject().put("limit", 42), headers("Mcp-Param-Limit", "forty-two")));
    assertNotNull(HEADERS.mismatch("run", new JsonObject().put("dry_run", true), headers("Mcp-Param-DryRun", "True")));
    assertNotNull(HEADERS.mismatch("run", new JsonObject().put("target", new JsonObject().put("zone", "a")), headers()));
  }

  @Test
  void decodingIsStrictOnlyInsideTheSentinel() {
    assertEquals("Hello", McpHeaders.decodeValue("=?base64?SGVsbG8=?="));
    assertEquals("", McpHeaders.decodeValue("=?base64??="));
    assertEquals("plain", McpHeaders.decodeValue("plain"));
    assertEquals("=?base64?=", McpHeaders.decodeValue("=?base64?="), "too short to hold the sentinel: literal");
    assertNull(McpHeaders.decodeValue("=?base64?SGVsbG8?="));
    assertNull(McpHeaders.decodeValue("=?base64?SGVs!!!bG8=?="));
    assertNull(McpHeaders.decodeValue("=?base64?/w==?="), "not UTF-8");
    assertNull(McpHeaders.decodeValue(null));
  }

  @Test
  void aMarkThatBreaksTheRevisionsRulesIsRefusedAtStart() {
    JsonObject str = new JsonObject().put("type", "string");
    List<JsonObject> bad = List.of(
        new JsonObject().put("type", "object").put("properties", new JsonObject().put("a", marked("number", "A"))),
        new JsonObject().put("type", "object").put("properties", new JsonObject().put("a", marked("string", ""))),
        new JsonObject().put("type", "object").put("properties", new JsonObject().put("a", marked("string", "Bad Name"))),
        new JsonObject().put("type", "object").put("properties", new JsonObject().put("a", marked("string", "X"))
            .put("b", marked("integer", "x"))),
        new JsonObject().put("type", "object").put("properties", new JsonObject().put("a", new JsonObject().put("type", "array")
            .put("items", marked("string", "Item")))),
        new JsonObject().put("type", "object").put("anyOf", new JsonArray().add(new JsonObject().put("properties",
            new JsonObject().put("a", marked("string", "A"))))),
        new JsonObject().put("type", "object").put("$defs", new JsonObject().put("d", marked("string", "D")))
            .put("properties", new JsonObject().put("a", new JsonObject().put("$ref", "#/$defs/d"))),
        marked("string", "Root").put("properties", new JsonObject().put("a", str)));
    for (JsonObject schema : bad) {
      assertThrows(IllegalArgumentException.class, () -> new ParamHeaders(Map.of("t", schema)), schema.encode());
    }
    JsonObject enumOfMarks = new JsonObject().put("type", "object").put("properties", new JsonObject()
        .put("a", new JsonObject().put("type", "object").put("default", new JsonObject().put(ParamHeaders.ANNOTATION, "NotAMark"))));
    assertTrue(new ParamHeaders(Map.of("t", enumOfMarks)).params("t").isEmpty(), "a default value is data, not a mark");
  }
}
