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

  /**
   * The {@link ToolRequest#tool} of a gateway's question to the command role how a proposal of the
   * request's caller stands (its argument: {@code proposal_id}), for the task that follows it; not a
   * tool a caller can call. Reply: {@link ToolReply} whose structured content is the proposal
   * ({@code status}, {@code reason}, {@code outcome}, ...), or NOT_FOUND when it is not the caller's.
   */
  public static final String PROPOSAL_STATE = "proposals/state";

  /**
   * The {@link ToolRequest#tool} of a gateway's read or write of a task of the request's caller, to
   * the command role, which keeps tasks in {@code tidemark.task}; not a tool a caller can call.
   * Arguments: {@code op} ({@code create}, {@code get}, {@code replace}, {@code remove}), {@code id},
   * and {@code state}, {@code old}, {@code expires_at_ms} as the operation needs.
   */
  public static final String TASK_STORE = "tasks/store";

  private Actions() {}
}
