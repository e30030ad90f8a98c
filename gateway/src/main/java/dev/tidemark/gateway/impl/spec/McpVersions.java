package dev.tidemark.gateway.impl.spec;

import java.util.List;

/** The MCP revisions this endpoint speaks with sessions and {@code initialize}. */
public final class McpVersions {

  public static final String LATEST = "2025-11-25";
  /** Newest first; {@code initialize} answers with the client's version when it is listed here. */
  public static final List<String> SUPPORTED = List.of("2025-11-25", "2025-06-18", "2025-03-26");
  /** What a request without {@code MCP-Protocol-Version} is taken to speak, as the transport asks. */
  public static final String ASSUMED_WHEN_ABSENT = "2025-03-26";
  /** Stateless revisions: each request carries its version and capabilities in {@code _meta}. */
  public static final List<String> MODERN = List.of("2026-07-28");
  /** Every revision this endpoint speaks, newest first. */
  public static final List<String> ALL = List.of("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26");

  private McpVersions() {}

  public static String negotiate(String requested) {
    return requested != null && SUPPORTED.contains(requested) ? requested : LATEST;
  }
}
