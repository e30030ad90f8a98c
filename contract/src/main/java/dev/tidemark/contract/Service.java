package dev.tidemark.contract;

/** The services a tool call can be routed to. */
public enum Service {
  QUERY,
  COMMAND,
  CHANGELOG
}
