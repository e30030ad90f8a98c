package dev.tidemark.changelog.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

/** Decoded values look like what to_jsonb made of them when the capture triggers wrote the images. */
class TextValuesTest {

  @Test
  void numbersAndBooleansAreJsonNumbersAndBooleans() {
    assertEquals(42L, TextValues.toJson(23, "42"));
    assertEquals(-7L, TextValues.toJson(20, "-7"));
    assertEquals(true, TextValues.toJson(16, "t"));
    assertEquals(false, TextValues.toJson(16, "f"));
    assertEquals(new BigDecimal("12.50"), TextValues.toJson(1700, "12.50"));
    assertEquals("NaN", TextValues.toJson(1700, "NaN"));
    assertEquals(1.5, TextValues.toJson(701, "1.5"));
    assertEquals("Infinity", TextValues.toJson(701, "Infinity"));
  }

  @Test
  void jsonIsParsedAndTimestampsAreIso8601() {
    assertEquals(new JsonObject().put("a", 1), TextValues.toJson(3802, "{\"a\": 1}"));
    assertEquals("2026-01-12T10:15:02.123456", TextValues.toJson(1114, "2026-01-12 10:15:02.123456"));
    assertEquals("2026-01-12T10:15:02.123456+00:00", TextValues.toJson(1184, "2026-01-12 10:15:02.123456+00"));
    assertEquals("2026-01-12T10:15:02+05:30", TextValues.toJson(1184, "2026-01-12 10:15:02+05:30"));
    assertEquals("2026-01-12", TextValues.toJson(1082, "2026-01-12"));
  }

  @Test
  void arraysBecomeJsonArraysWithTheirElementsMapped() {
    assertEquals(new JsonArray().add(1L).add(2L).addNull(), TextValues.toJson(1007, "{1,2,NULL}"));
    assertEquals(new JsonArray().add("a b").add("c\"d").add("NULL"), TextValues.toJson(1009, "{\"a b\",\"c\\\"d\",\"NULL\"}"));
    assertEquals(new JsonArray().add(new JsonArray().add(1L)).add(new JsonArray().add(2L)), TextValues.toJson(1007, "{{1},{2}}"));
    assertEquals(new JsonArray(), TextValues.toJson(1009, "{}"));
  }

  @Test
  void otherTypesAndNullKeepTheirText() {
    assertEquals("\\x0102", TextValues.toJson(17, "\\x0102"));
    assertEquals("1 day 02:00:00", TextValues.toJson(1186, "1 day 02:00:00"));
    assertEquals(null, TextValues.toJson(23, null));
  }
}
