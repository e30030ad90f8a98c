package dev.tidemark.contract;

import java.util.Locale;

/** The roles a node can run; any JVM may run any subset. */
public enum Role {
  GATEWAY,
  QUERY,
  COMMAND,
  CHANGELOG;

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Role fromWire(String value) {
    for (Role r : values()) {
      if (r.wire().equals(value)) {
        return r;
      }
    }
    throw new IllegalArgumentException(
        "unknown role '" + value + "'; roles are gateway, query, command, changelog");
  }
}
