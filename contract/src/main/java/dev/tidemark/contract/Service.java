package dev.tidemark.contract;

/** The services a tool call can be routed to. */
public enum Service {
  QUERY,
  COMMAND,
  CHANGELOG,
  /** The events tools (durable consumers over Kafka share groups), run by every node with the query role. */
  EVENTS
}
