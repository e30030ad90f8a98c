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

  /**
   * The failure {@link #toJson} wrote, as a service's reply carries it to another service; a code
   * this version does not know is INTERNAL.
   */
  public static ToolException fromJson(JsonObject error) {
    JsonObject details = error.copy();
    details.remove("code");
    details.remove("message");
    details.remove("retriable");
    return new ToolException(ErrorCode.of(error.getValue("code")).orElse(ErrorCode.INTERNAL), error.getString("message"), details);
  }

  /** The {@code structuredContent.error} object: details first, then the code, message and whether a retry may help. */
  public JsonObject toJson() {
    return details.copy().put("code", code.code()).put("message", getMessage()).put("retriable", code.retriable());
  }
}
