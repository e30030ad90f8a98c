package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.KeyRingSource;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;

/**
 * A reaction of a named change tool to an event: the causation token events_next handed out with
 * the event, opened into the {@code caused_by} that every change tool understands, so that the
 * reaction's idempotency key comes from the event, its lease is checked before it commits, and
 * its attribution names the event. The token was sealed for this caller and this tool alone.
 */
final class Reactions {

  private Reactions() {}

  /** {@code request} with its causation token turned into caused_by; unchanged when it carries none. */
  static ToolRequest causedBy(ToolRequest request, KeyRingSource keys) {
    if (request.named() == null || !(request.arguments().getValue(NamedTool.CAUSATION_TOKEN) instanceof String token)) {
      return request;
    }
    JsonObject claims = keys.ring().open(NamedTool.CAUSATION_PURPOSE, request.caller().id(), token)
        .map(bytes -> new JsonObject(new String(bytes, StandardCharsets.UTF_8)))
        .orElseThrow(() -> refused("The causation_token was not issued to you by events_next; nothing was written. Pass the"
            + " causation_token of a reaction events_next returned with the event, as it came."));
    if (!request.tool().equals(claims.getString("t"))) {
      throw refused("This causation_token is for the reaction " + claims.getString("t") + ", not " + request.tool()
          + "; nothing was written. Call the tool the reaction names, or another reaction of the event with its own token.");
    }
    JsonObject args = request.arguments().copy();
    args.remove(NamedTool.CAUSATION_TOKEN);
    args.put("caused_by", new JsonObject().put("consumer", claims.getString("c")).put("event_id", claims.getString("e"))
        .put("lease_token", claims.getString("l")));
    return request.withArguments(args);
  }

  /** A failure of a reaction called with a causation token names that argument, not the caused_by it became. */
  static Throwable blame(ToolRequest given, Throwable err) {
    if (given.named() == null || !given.arguments().containsKey(NamedTool.CAUSATION_TOKEN) || !(err instanceof ToolException te)
        || !"caused_by".equals(te.details().getValue("argument"))) {
      return err;
    }
    return new ToolException(te.code(), te.getMessage().replace("caused_by", NamedTool.CAUSATION_TOKEN),
        te.details().copy().put("argument", NamedTool.CAUSATION_TOKEN));
  }

  private static ToolException refused(String message) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, message, new JsonObject().put("argument", NamedTool.CAUSATION_TOKEN));
  }
}
