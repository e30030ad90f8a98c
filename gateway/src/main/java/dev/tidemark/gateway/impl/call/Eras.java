package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.call.Eras;
import dev.tidemark.gateway.impl.call.LogLevels;
import dev.tidemark.gateway.impl.spec.McpVersions;
import dev.tidemark.gateway.impl.spec.Meta;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** What both eras decide the same way: which era a request speaks, and whether its answer is worth a stream. */
public final class Eras {

  /** The capabilities under which a 2025-11-25 call may send the client a request mid-call. */
  private static final List<String> SERVER_REQUEST_CAPABILITIES = List.of("elicitation", "sampling", "roots");

  private Eras() {}

  /**
   * A request whose {@code _meta} names its protocol version, or whose version header names a
   * stateless revision, is 2026-07-28; anything else is 2025-11-25 or older. Decided per request,
   * so one endpoint serves both without a flag or a second path.
   */
  public static boolean modern(JsonObject meta, String headerVersion) {
    return meta.containsKey(Meta.VERSION) || (headerVersion != null && McpVersions.MODERN.contains(headerVersion));
  }

  /** What a tool may send its client before its result, besides the progress the client asks for. */
  public enum Voice {
    /** A catalogue tool that never asks: a debug line as it starts, a warning when it fails. */
    READ,
    /** A catalogue change: as a read, an info line, and an elicitation when a removal needs the user's consent. */
    CHANGE,
    /** An extension's tool, or a method other than tools/call: any log message, any server request the client can answer. */
    ANY
  }

  /** The most severe message a catalogue tool logs mid-call. */
  private static final String LOUDEST_CATALOGUE_LOG = "warning";

  /**
   * Whether a call may send the client anything before its response: progress it asked for, log
   * messages at the level it set, or a server request (elicitation, sampling, roots) it declared
   * it can answer. Only then is an event stream worth its cost; any other answer is one JSON body,
   * which is also the shape every client reads, and leaves nothing to keep for replay.
   */
  public static boolean mayPrecedeResponse(Object progressToken, String logLevel, JsonObject clientCapabilities) {
    return mayPrecedeResponse(progressToken, logLevel, clientCapabilities, Voice.ANY);
  }

  /** As above, for a tool whose {@link Voice} is known. */
  public static boolean mayPrecedeResponse(Object progressToken, String logLevel, JsonObject clientCapabilities, Voice voice) {
    if (progressToken != null) {
      return true;
    }
    return switch (voice) {
      case READ -> LogLevels.passes(LOUDEST_CATALOGUE_LOG, logLevel);
      case CHANGE -> LogLevels.passes(LOUDEST_CATALOGUE_LOG, logLevel) || (clientCapabilities != null && clientCapabilities.containsKey("elicitation"));
      case ANY -> logLevel != null
          || (clientCapabilities != null && SERVER_REQUEST_CAPABILITIES.stream().anyMatch(clientCapabilities::containsKey));
    };
  }
}
