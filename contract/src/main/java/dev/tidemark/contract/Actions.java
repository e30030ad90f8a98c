package dev.tidemark.contract;

/** Values of the {@link Addresses#ACTION_HEADER} header. */
public final class Actions {

  /** Body: {@link ToolRequest}; reply: {@link ToolReply}. */
  public static final String TOOL_CALL = "tools/call";
  /** Body: empty; reply: {@link ServiceHealth}. */
  public static final String HEALTH = "health";

  private Actions() {}
}
