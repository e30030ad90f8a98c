package dev.tidemark.gateway.impl.call;

import java.util.List;

/** The MCP log levels, least severe first (RFC 5424 order). */
public final class LogLevels {

  public static final List<String> ORDER = List.of("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency");

  private LogLevels() {}

  public static boolean valid(String level) {
    return level != null && ORDER.contains(level);
  }

  /** Whether a message at {@code level} passes a client threshold; no threshold lets nothing through. */
  public static boolean passes(String level, String threshold) {
    return threshold != null && valid(level) && ORDER.indexOf(level) >= ORDER.indexOf(threshold);
  }
}
