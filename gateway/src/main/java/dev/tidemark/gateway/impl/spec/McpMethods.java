package dev.tidemark.gateway.impl.spec;

/**
 * The MCP method names Tidemark serves, sends or routes on, declared once: the method table keys
 * its handlers by them, and every check of a request's method compares with them.
 */
public final class McpMethods {

  // ---- requests a client sends ----
  public static final String INITIALIZE = "initialize";
  public static final String PING = "ping";
  public static final String TOOLS_LIST = "tools/list";
  public static final String TOOLS_CALL = "tools/call";
  public static final String RESOURCES_LIST = "resources/list";
  public static final String RESOURCES_TEMPLATES_LIST = "resources/templates/list";
  public static final String RESOURCES_READ = "resources/read";
  public static final String RESOURCES_SUBSCRIBE = "resources/subscribe";
  public static final String RESOURCES_UNSUBSCRIBE = "resources/unsubscribe";
  public static final String PROMPTS_LIST = "prompts/list";
  public static final String PROMPTS_GET = "prompts/get";
  public static final String COMPLETION_COMPLETE = "completion/complete";
  public static final String LOGGING_SET_LEVEL = "logging/setLevel";
  /** 2026-07-28 only. */
  public static final String SERVER_DISCOVER = "server/discover";
  /** 2026-07-28 only: the stream of notifications a client listens to. */
  public static final String SUBSCRIPTIONS_LISTEN = "subscriptions/listen";
  public static final String TASKS_GET = "tasks/get";
  public static final String TASKS_UPDATE = "tasks/update";
  public static final String TASKS_CANCEL = "tasks/cancel";

  // ---- requests the server sends a client, by the capability they need ----
  public static final String ELICITATION_CREATE = "elicitation/create";
  public static final String SAMPLING_PREFIX = "sampling/";
  public static final String ELICITATION_PREFIX = "elicitation/";

  // ---- notifications ----
  public static final String NOTIFICATION_CANCELLED = "notifications/cancelled";
  public static final String NOTIFICATION_PROGRESS = "notifications/progress";
  public static final String NOTIFICATION_MESSAGE = "notifications/message";
  public static final String NOTIFICATION_RESOURCE_UPDATED = "notifications/resources/updated";
  public static final String NOTIFICATION_RESOURCES_LIST_CHANGED = "notifications/resources/list_changed";
  public static final String NOTIFICATION_TOOLS_LIST_CHANGED = "notifications/tools/list_changed";
  public static final String NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

  private McpMethods() {}

  /** The client capability a server's request of {@code method} needs. */
  public static String capability(String method) {
    return method.startsWith(SAMPLING_PREFIX) ? "sampling" : method.startsWith(ELICITATION_PREFIX) ? "elicitation" : "roots";
  }
}
