package dev.tidemark.contract;

/** Values of the {@link Addresses#ACTION_HEADER} header. */
public final class Actions {

  /** Body: {@link ToolRequest}; reply: {@link ToolReply}. */
  public static final String TOOL_CALL = "tools/call";
  /** Body: empty; reply: {@link ServiceHealth}. */
  public static final String HEALTH = "health";

  /**
   * The {@link ToolRequest#tool} of the command role's question to the events role whether a
   * reaction's lease is still held (its arguments: consumer, lease_token, event_ids); not a tool a
   * caller can call, since a gateway routes only the catalog's tools. Reply: {@link ToolReply}.
   */
  public static final String LEASE_HELD = "events/lease-held";

  private Actions() {}
}
