package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;

/** A tool failure with a stable code; travels as a {@link ToolReply} and ends as {@code isError: true}. */
public class ToolException extends RuntimeException {

  private final ErrorCode code;
  private final JsonObject details;

  public ToolException(ErrorCode code, String message) {
    this(code, message, new JsonObject());
  }

  public ToolException(ErrorCode code, String message, JsonObject details) {
    super(message, null, false, false);
    this.code = code;
    this.details = details == null ? new JsonObject() : details;
  }

  public ErrorCode code() {
    return code;
  }

  public JsonObject details() {
    return details;
  }

  /** The {@code structuredContent.error} object: details first, then the code, message and whether a retry may help. */
  public JsonObject toJson() {
    return details.copy().put("code", code.code()).put("message", getMessage()).put("retriable", code.retriable());
  }
}
