package dev.tidemark.gateway.impl.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputFormat;
import io.vertx.json.schema.Validator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SchemaCheckTest {

  private static final JsonSchemaOptions OPTIONS = new JsonSchemaOptions().setDraft(Draft.DRAFT202012)
      .setBaseUri("https://tidemark.dev/schemas/").setOutputFormat(OutputFormat.Flag);

  @Test
  void everyToolOfTheCatalogIsCompiled() {
    for (ToolDescriptor tool : ToolCatalog.all()) {
      assertNotNull(SchemaCheck.compile(tool.inputSchema()), tool.name() + "'s inputSchema was not compiled");
    }
  }

  @Test
  void getRowArgumentsThatFitAreAcceptedWithoutTheGeneralValidator() {
    SchemaCheck check = check(ToolCatalog.GET_ROW);
    assertTrue(check.accepts(new JsonObject().put("table", "customers").put("key", 7)));
    assertTrue(check.accepts(new JsonObject().put("table", "customers").put("key", "a-key")));
    assertTrue(check.accepts(new JsonObject().put("table", "orders").put("key", new JsonArray().add(1).add("x").add(true))));
  }

  @Test
  void getRowArgumentsThatBreakTheSchemaAreNeverAccepted() {
    SchemaCheck check = check(ToolCatalog.GET_ROW);
    assertFalse(check.accepts(new JsonObject().put("table", "customers")), "a required argument missing");
    assertFalse(check.accepts(new JsonObject().put("table", "customers").put("key", 1).put("kye", 1)), "an unknown argument");
    assertFalse(check.accepts(new JsonObject().put("table", 5).put("key", 1)), "a table that is no string");
    assertFalse(check.accepts(new JsonObject().put("table", "t").put("key", new JsonObject())), "a key that is an object");
    assertFalse(check.accepts(new JsonObject().put("table", "t").put("key", new JsonArray())), "a key of no columns");
    assertFalse(check.accepts(new JsonObject().put("table", "t").put("key", new JsonArray().add(new JsonArray()))), "a nested array");
    JsonArray long_ = new JsonArray();
    for (int i = 0; i < 33; i++) {
      long_.add(i);
    }
    assertFalse(check.accepts(new JsonObject().put("table", "t").put("key", long_)), "a key of 33 columns");
  }

  @Test
  void aSchemaWithAKeywordItDoesNotKnowIsLeftToTheGeneralValidator() {
    assertNull(SchemaCheck.compile(new JsonObject().put("type", "string").put("format", "email")));
    assertNull(SchemaCheck.compile(new JsonObject().put("anyOf", new JsonArray().add(new JsonObject().put("type", "string")))));
    assertNull(SchemaCheck.compile(new JsonObject().put("$ref", "https://elsewhere.example/schema")));
  }

  @Test
  void numbersItCannotDecideExactlyGoToTheGeneralValidator() {
    SchemaCheck integer = SchemaCheck.compile(new JsonObject().put("type", "integer").put("maximum", 10));
    assertTrue(integer.accepts(10));
    assertFalse(integer.accepts(11));
    assertFalse(integer.accepts(2.0), "a whole double is an integer to JSON Schema, decided by the general validator");
    assertFalse(integer.accepts(2.5));
    assertFalse(integer.accepts(new java.math.BigInteger("5")));
    SchemaCheck text = SchemaCheck.compile(new JsonObject().put("type", "string").put("maxLength", 2));
    assertTrue(text.accepts("ab"));
    assertFalse(text.accepts("abc"));
    assertFalse(text.accepts("a\uD83D\uDE00"), "two code points in three UTF-16 units: the general validator decides");
  }

  /**
   * Against vertx-json-schema on every tool's schema, for values made from the schema and then
   * broken at random: whatever the compiled check accepts, the general validator accepts too.
   */
  @Test
  void whatItAcceptsTheGeneralValidatorAcceptsForEveryToolOnRandomArguments() {
    Random random = new Random(39);
    for (ToolDescriptor tool : ToolCatalog.all()) {
      JsonObject schema = tool.inputSchema();
      SchemaCheck check = SchemaCheck.compile(schema);
      Validator validator = Validator.create(JsonSchema.of(schema.copy()), OPTIONS);
      int accepted = 0;
      for (int i = 0; i < 1_000; i++) {
        Object value = new Values(schema, random).of(schema, 0, random.nextInt(4) == 0);
        boolean general = Boolean.TRUE.equals(validator.validate(value).getValid());
        if (check.accepts(value)) {
          accepted++;
          assertTrue(general, tool.name() + ": accepted what the schema refuses: " + value);
        }
      }
      assertTrue(accepted > 0, tool.name() + ": no random value was accepted, so this test checked nothing of it");
    }
  }

  @Test
  void aRecursiveSchemaEndsAndChecksEachLevel() {
    JsonObject schema = new JsonObject()
        .put("$defs", new JsonObject().put("node", new JsonObject().put("type", "object")
            .put("properties", new JsonObject().put("name", new JsonObject().put("type", "string"))
                .put("children", new JsonObject().put("type", "array").put("items", new JsonObject().put("$ref", "#/$defs/node"))))
            .put("additionalProperties", false)))
        .put("$ref", "#/$defs/node");
    SchemaCheck check = SchemaCheck.compile(schema);
    JsonObject tree = new JsonObject().put("name", "a").put("children", new JsonArray()
        .add(new JsonObject().put("name", "b").put("children", new JsonArray().add(new JsonObject().put("name", "c")))));
    assertTrue(check.accepts(tree));
    tree.getJsonArray("children").getJsonObject(0).getJsonArray("children").getJsonObject(0).put("name", 3);
    assertFalse(check.accepts(tree));
  }

  private static SchemaCheck check(String tool) {
    SchemaCheck check = SchemaCheck.compile(ToolCatalog.find(tool).orElseThrow().inputSchema());
    assertNotNull(check);
    return check;
  }

  /** Values shaped by a schema, each part broken now and then when {@code breaking}. */
  private record Values(JsonObject root, Random random) {

    Object of(Object schema, int depth, boolean breaking) {
      if (!(schema instanceof JsonObject s) || depth > 6) {
        return any(depth);
      }
      if (breaking && random.nextInt(8) == 0) {
        return any(depth);
      }
      if (s.getValue("$ref") instanceof String ref) {
        return of(ArgumentValidator.resolve(root, ref), depth + 1, breaking);
      }
      if (s.getValue("enum") instanceof JsonArray choices && !choices.isEmpty()) {
        return choices.getValue(random.nextInt(choices.size()));
      }
      Object type = s.getValue("type");
      String chosen = type instanceof JsonArray a ? a.getString(random.nextInt(a.size())) : type instanceof String t ? t : "object";
      return switch (chosen) {
        case "object" -> object(s, depth, breaking);
        case "array" -> {
          int min = s.getInteger("minItems", 0);
          int max = Math.min(s.getInteger("maxItems", min + 4), min + 4);
          int n = breaking && random.nextBoolean() ? random.nextInt(max + 3) : min + random.nextInt(Math.max(1, max - min + 1));
          JsonArray array = new JsonArray();
          for (int i = 0; i < n; i++) {
            array.add(of(s.getValue("items", true), depth + 1, breaking));
          }
          yield array;
        }
        case "string" -> {
          int min = s.getInteger("minLength", 0);
          int max = Math.min(s.getInteger("maxLength", min + 12), min + 12);
          int n = breaking && random.nextBoolean() ? random.nextInt(max + 3) : min + random.nextInt(Math.max(1, max - min + 1));
          yield random.nextInt(20) == 0 ? "\uD83D\uDE00".repeat(Math.max(1, n / 2)) : "x".repeat(n);
        }
        case "integer" -> number(s, breaking, true);
        case "number" -> number(s, breaking, random.nextBoolean());
        case "boolean" -> random.nextBoolean();
        default -> null;
      };
    }

    private JsonObject object(JsonObject s, int depth, boolean breaking) {
      JsonObject object = new JsonObject();
      JsonObject props = s.getJsonObject("properties", new JsonObject());
      List<Object> required = s.getJsonArray("required", new JsonArray()).getList();
      for (String name : props.fieldNames()) {
        boolean needed = required.contains(name);
        if ((needed && !(breaking && random.nextInt(6) == 0)) || random.nextBoolean()) {
          object.put(name, of(props.getValue(name), depth + 1, breaking));
        }
      }
      if (breaking && random.nextInt(6) == 0) {
        object.put("unknown_" + random.nextInt(3), any(depth + 1));
      }
      return object;
    }

    private Object number(JsonObject s, boolean breaking, boolean integer) {
      long min = s.getValue("minimum") instanceof Number n ? (long) Math.ceil(n.doubleValue()) : -1000;
      long max = s.getValue("maximum") instanceof Number n ? (long) Math.floor(n.doubleValue()) : 1000;
      long spread = Math.max(1, Math.min(max - min + 1, 1_000_000));
      long value = breaking && random.nextBoolean() ? min - 2 + random.nextInt(5) : min + Math.floorMod(random.nextLong(), spread);
      if (!integer) {
        return value + (random.nextBoolean() ? 0.5 : 0.0);
      }
      return random.nextBoolean() ? (Object) (int) value : (Object) value;
    }

    private Object any(int depth) {
      return switch (random.nextInt(depth > 4 ? 6 : 8)) {
        case 0 -> null;
        case 1 -> random.nextBoolean();
        case 2 -> random.nextInt(100) - 50;
        case 3 -> random.nextDouble();
        case 4 -> "s" + random.nextInt(10);
        case 5 -> "";
        case 6 -> new JsonArray().add(any(depth + 1));
        default -> new JsonObject().put("k", any(depth + 1));
      };
    }
  }

  @Test
  void theArgumentCheckStillListsEveryFaultOnceTheCompiledCheckDeclines() {
    ArgumentValidator validator = ArgumentValidator.forTools(ToolCatalog.all());
    assertEquals(0, validator.faults(ToolCatalog.GET_ROW, new JsonObject().put("table", "t").put("key", 1)).size());
    JsonArray faults = validator.faults(ToolCatalog.GET_ROW, new JsonObject().put("table", 5).put("kye", 1));
    assertEquals(3, faults.size(), faults.encode());
    assertTrue(faults.encode().contains("\"/key\""), faults.encode());
    assertTrue(faults.encode().contains("\"/kye\""), faults.encode());
    assertTrue(faults.encode().contains("\"/table\""), faults.encode());
  }
}
