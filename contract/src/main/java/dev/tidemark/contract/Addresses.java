package dev.tidemark.contract;

/**
 * Event-bus addresses, declared once. Every address is versioned and names the database it serves,
 * so that one cluster can serve several databases without a new seam.
 */
public final class Addresses {

  /** Read tools of one database: {@code tidemark.query.v1.<database>}. */
  public static final String QUERY_V1 = "tidemark.query.v1";
  /** Change tools of one database: {@code tidemark.command.v1.<database>}. */
  public static final String COMMAND_V1 = "tidemark.command.v1";
  /** The changelog role of one database: {@code tidemark.changelog.v1.<database>}. */
  public static final String CHANGELOG_V1 = "tidemark.changelog.v1";

  /**
   * The events tools of one database, served by every node with the query role:
   * {@code tidemark.events.v1.<database>}. Body: {@link ToolRequest}.
   */
  public static final String EVENTS_V1 = "tidemark.events.v1";
  /**
   * Acks and nacks of the leases one node holds: {@code tidemark.events-node.v1.<database>.<node id>}.
   * Body: {@link ToolRequest}; the node that took the call forwards it here from the lease token.
   */
  public static final String EVENTS_NODE_V1 = "tidemark.events-node.v1";
  /**
   * Published by events_seek to every node of one database: {@code tidemark.events-control.v1.<database>}.
   * Body: {@code {"group": "<share group id>", "action": "hold"|"resume", "hold_ms": n}}.
   */
  public static final String EVENTS_CONTROL_V1 = "tidemark.events-control.v1";

  /**
   * Committed data changes of one database, published by every gateway node to its own local
   * consumers only: {@code tidemark.changes.v1.<database>}. Body: {@link ChangeNotice}.
   */
  public static final String CHANGES_V1 = "tidemark.changes.v1";
  /**
   * Committed schema changes (DDL) of one database, local to each gateway node:
   * {@code tidemark.schema-changes.v1.<database>}. Body: {@link SchemaChangeNotice}.
   */
  public static final String SCHEMA_CHANGES_V1 = "tidemark.schema-changes.v1";

  /**
   * Cancellations of running tool calls, published to every service node of one database:
   * {@code tidemark.cancel.v1.<database>}. Body: {@code {"request_id": "<ToolRequest.requestId>"}}.
   */
  public static final String CANCEL_V1 = "tidemark.cancel.v1";

  /**
   * Published by the gateway that changed or ended a session, with its id as {@code {"id": ...}}:
   * every gateway drops its copy of that session.
   */
  public static final String SESSION_CHANGED_V1 = "tidemark.session-changed.v1";

  /**
   * Cancellations of 2025-11-25 calls, published by the gateway that heard
   * {@code notifications/cancelled} to every gateway, since the call may run on any of them. Body:
   * {@code {"key": "<session id>|<request id as JSON>"}}.
   */
  public static final String GATEWAY_CANCEL_V1 = "tidemark.gateway.cancel.v1";

  /**
   * A client's answer to a server request (sampling, elicitation), sent by the gateway that
   * received the POST to the call waiting for it: {@code tidemark.client-reply.v1.<request id>}.
   */
  public static final String CLIENT_REPLY_V1 = "tidemark.client-reply.v1";

  /**
   * The GET stream of one 2025-11-25 session, consumed by whichever gateway holds it:
   * {@code tidemark.session.v1.<session id>}. Body: {@code {"id": <event id>, "message": {...}}}, or
   * {@code {"takeover": "<stream id>"}} when a newer stream (or the session's end) replaces it.
   */
  public static final String SESSION_V1 = "tidemark.session.v1";

  /**
   * One 2026-07-28 listen stream, consumed by the gateway that holds it:
   * {@code tidemark.listen.v1.<listener id>}. Body: the notification to send; the holder replies.
   */
  public static final String LISTEN_V1 = "tidemark.listen.v1";

  /** Cluster map of 2025-11-25 sessions, by session id. */
  public static final String SESSIONS_MAP = "tidemark.sessions.v1";
  /**
   * Cluster map of the SSE events kept for replay: one entry per event, {@code <session>|<stream>|<seq>},
   * and each session's GET-stream counter, {@code <session>|g}. (v1 kept a whole session in one entry.)
   */
  public static final String EVENTS_MAP = "tidemark.events.v2";
  /** Cluster map from {@code <database>|<canonical resource URI>} to the resource's subscribers. */
  public static final String SUBSCRIPTIONS_MAP = "tidemark.subscriptions.v1";
  /**
   * Published by the gateway that added a subscriber to a resource, to every gateway: body the
   * subscription map's key, {@code <database>|<canonical resource URI>}. A gateway reads the map
   * for a change only under keys it heard of here (or in its periodic read of the map's keys).
   */
  public static final String SUBSCRIBED_V1 = "tidemark.subscribed.v1";
  /**
   * Cluster map of the subscriptions each caller holds, by caller id: per session the resources it
   * subscribes to, per listen stream how many and until when its gateway last vouched for it.
   */
  public static final String SUBSCRIPTION_HOLDERS_MAP = "tidemark.subscription-holders.v1";
  /** Cluster map of claimed change positions: the gateway that claims one announces that change. */
  public static final String NOTIFIED_MAP = "tidemark.notified.v1";
  /**
   * Cluster map holding the secret that signs 2026-07-28 {@code requestState} values, so that a
   * retry may reach any gateway.
   */
  public static final String REQUEST_STATE_KEYS_MAP = "tidemark.request-state-keys.v1";

  /**
   * Cluster counters of each caller's tool calls in the current rate-limit window:
   * {@code tidemark.rate.v1.<caller id>}. The value holds the window's number above
   * {@code RATE_COUNT_BITS} bits and the window's count below them.
   */
  public static final String RATE_COUNTER_PREFIX = "tidemark.rate.v1.";
  public static final int RATE_COUNT_BITS = 24;

  /**
   * Cluster map of how many events each node leases now, by {@code <share group id>|<node id>};
   * each entry lives as long as the lease, so a node that died stops counting.
   */
  public static final String EVENTS_LEASED_MAP = "tidemark.events-leased.v1";

  /**
   * The check of named tools' statements for one database ({@code tidemark.named-tools.v1.<database>}),
   * answered by every node with the query role: a node without it (a gateway alone) asks here, with
   * the definitions as {@code {"tools": [...]}}, and gets {@code {"refused": {name: fault}}}.
   */
  public static final String NAMED_TOOLS_V1 = "tidemark.named-tools.v1";
  /**
   * Local to each node: published by the node's cluster manager hook when a member left the
   * cluster (died, or was cut off), with the member's cluster node id as the body, so that what
   * waits on that member (a gateway's calls in flight) can end at once instead of at its timeout.
   */
  public static final String NODE_LEFT_V1 = "tidemark.node-left.v1";
  /**
   * The tool requests a node's services are answering now: {@code tidemark.running.v1.<cluster node id>},
   * consumed once per node that runs the query or the command role. Body {@code {"request_ids": [...]}};
   * reply {@code {"running": [...]}}, those of them the node holds. A gateway asks every member when
   * one left, to learn which of its calls in flight died with it.
   */
  public static final String RUNNING_V1 = "tidemark.running.v1";
  /**
   * Cluster map of what each gateway saw of its callers over the last hour (calls per tool, errors
   * per code, refusals, open streams), by node id, written by each node's console every few seconds
   * and read by any node's console; an entry expires with its node.
   */
  public static final String CONSOLE_ACTIVITY_MAP = "tidemark.console-activity.v1";
  /** Cluster map of the console forms already sent, by the form's nonce, each kept until the form would expire: a form is sent once. */
  public static final String CONSOLE_FORMS_MAP = "tidemark.console-forms.v1";
  /** Cluster map of console sign-ins that were ended (signed out), by sign-in id, each kept until the sign-in would expire. */
  public static final String CONSOLE_SIGNED_OUT_MAP = "tidemark.console-signed-out.v1";

  /**
   * The client's answers to what a running task asked ({@code tasks/update}), published by the gateway
   * that took the request to the one that runs the task: {@code tidemark.task-input.v1.<task id>}.
   * Body: {@code {"responses": {"<key>": {...}}}}.
   */
  public static final String TASK_INPUT_V1 = "tidemark.task-input.v1";

  /** Message header that names what a request asks for. */
  public static final String ACTION_HEADER = "action";

  private Addresses() {}

  public static String query(String database) {
    return QUERY_V1 + "." + database;
  }

  public static String command(String database) {
    return COMMAND_V1 + "." + database;
  }

  public static String changelog(String database) {
    return CHANGELOG_V1 + "." + database;
  }

  public static String events(String database) {
    return EVENTS_V1 + "." + database;
  }

  public static String eventsNode(String database, String nodeId) {
    return EVENTS_NODE_V1 + "." + database + "." + nodeId;
  }

  public static String eventsControl(String database) {
    return EVENTS_CONTROL_V1 + "." + database;
  }

  public static String changes(String database) {
    return CHANGES_V1 + "." + database;
  }

  public static String schemaChanges(String database) {
    return SCHEMA_CHANGES_V1 + "." + database;
  }

  public static String cancel(String database) {
    return CANCEL_V1 + "." + database;
  }

  public static String clientReply(String requestId) {
    return CLIENT_REPLY_V1 + "." + requestId;
  }

  public static String session(String sessionId) {
    return SESSION_V1 + "." + sessionId;
  }

  public static String listen(String listenerId) {
    return LISTEN_V1 + "." + listenerId;
  }

  public static String taskInput(String taskId) {
    return TASK_INPUT_V1 + "." + taskId;
  }

  public static String namedTools(String database) {
    return NAMED_TOOLS_V1 + "." + database;
  }

  public static String running(String clusterNodeId) {
    return RUNNING_V1 + "." + clusterNodeId;
  }

  public static String forService(Service service, String database) {
    return switch (service) {
      case QUERY -> query(database);
      case COMMAND -> command(database);
      case CHANGELOG -> changelog(database);
      case EVENTS -> events(database);
    };
  }
}
