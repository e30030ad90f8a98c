package dev.tidemark.command;

import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * Canonical JSON (object keys sorted, no spaces) and hashes of it. The canonical input of a change
 * is the tool and its arguments without {@code plan_id}, {@code confirm} and {@code idempotency_key},
 * and of {@code caused_by} only the event (consumer and event id: its lease token differs on every
 * delivery, and the reaction to a redelivered event is the same change): two calls that mean the
 * same change hash the same, whatever order their keys came in.
 */
public final class Canonical {

  /** Arguments that steer the plan/commit flow and are not part of the change itself. */
  public static final Set<String> FLOW_ARGUMENTS = Set.of("plan_id", "confirm", "idempotency_key");

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

  private Canonical() {}

  /** The hash of the canonical input of {@code tool} called with {@code arguments}. */
  public static String inputHash(String tool, JsonObject arguments) {
    JsonObject change = new JsonObject();
    arguments.forEach(e -> {
      if ("caused_by".equals(e.getKey()) && e.getValue() instanceof JsonObject cause) {
        change.put(e.getKey(), new JsonObject().put("consumer", cause.getValue("consumer")).put("event_id", cause.getValue("event_id")));
      } else if (!FLOW_ARGUMENTS.contains(e.getKey())) {
        change.put(e.getKey(), e.getValue());
      }
    });
    return hash(json(new JsonObject().put("tool", tool).put("arguments", change)));
  }

  /** The canonical text of a JSON value. */
  public static String json(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object value, StringBuilder out) {
    if (value instanceof JsonObject o) {
      List<String> keys = new ArrayList<>(o.fieldNames());
      Collections.sort(keys);
      out.append('{');
      for (int i = 0; i < keys.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        out.append(Json.encode(keys.get(i)));
        out.append(':');
        write(o.getValue(keys.get(i)), out);
      }
      out.append('}');
    } else if (value instanceof JsonArray a) {
      out.append('[');
      for (int i = 0; i < a.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        write(a.getValue(i), out);
      }
      out.append(']');
    } else {
      out.append(Json.encode(value));
    }
  }

  /** SHA-256 of the UTF-8 text, base64url without padding. */
  public static String hash(String text) {
    return B64.encodeToString(sha256(text.getBytes(StandardCharsets.UTF_8)));
  }

  static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
