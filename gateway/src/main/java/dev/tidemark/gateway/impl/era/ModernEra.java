package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.call.Eras;
import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Cancellation;
import dev.tidemark.gateway.impl.call.LogLevels;
import dev.tidemark.gateway.impl.http.Answer;
import dev.tidemark.gateway.impl.http.Authenticated;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.http.RequestGuards;
import dev.tidemark.gateway.impl.jsonrpc.Envelope;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import dev.tidemark.gateway.impl.spec.McpVersions;
import dev.tidemark.gateway.impl.spec.Meta;
import dev.tidemark.gateway.impl.call.Channels;
import dev.tidemark.gateway.impl.call.ResponseChannel;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;

/**
 * The 2026-07-28 era: stateless, every request carries its version and capabilities in
 * {@code _meta}, and its headers (version, method, name) must repeat what the body says, so that
 * an intermediary that routes on headers acts on what the server will run.
 */
public final class ModernEra {

  /** The methods whose Mcp-Name header repeats a body field, and that field of their params. */
  private static final Map<String, String> NAMED_METHODS = Map.of(McpMethods.TOOLS_CALL, "name", McpMethods.PROMPTS_GET, "name", McpMethods.RESOURCES_READ, "uri",
      McpMethods.TASKS_GET, "taskId", McpMethods.TASKS_UPDATE, "taskId", McpMethods.TASKS_CANCEL, "taskId");

  private final ParamHeaders paramHeaders;

  public ModernEra(ParamHeaders paramHeaders) {
    this.paramHeaders = paramHeaders;
  }

  /** Throws a {@link Refusal} for a request whose headers and body disagree. */
  public Turn turn(MultiMap headers, Authenticated who, Envelope env, Channels channels) {
    Object id = env.id();
    String name = env.method();
    JsonObject p = env.params();
    JsonObject meta = env.meta();
    RpcFailure noVersion = RequestMeta.versionFault(p);
    if (noVersion != null) {
      throw Refusal.rpc(noVersion.httpStatus(), noVersion.toMessage(id));
    }
    String headerVersion = headers.get(McpHeaders.VERSION);
    Object bodyVersion = meta.getValue(Meta.VERSION);
    if (headerVersion == null || !(bodyVersion instanceof String v) || !headerVersion.equals(v)) {
      throw Refusal.rpc(400, JsonRpc.error(id, JsonRpc.HEADER_MISMATCH,
          "Header mismatch: MCP-Protocol-Version must be sent and equal _meta." + Meta.VERSION + "."));
    }
    if (!McpVersions.MODERN.contains(v)) {
      throw Refusal.rpc(400, JsonRpc.error(id, JsonRpc.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version.",
          new JsonObject().put("supported", new JsonArray(McpVersions.ALL)).put("requested", v)));
    }
    if (!name.equals(headers.get(McpHeaders.METHOD))) {
      throw Refusal.rpc(400, JsonRpc.error(id, JsonRpc.HEADER_MISMATCH, "Header mismatch: Mcp-Method must be sent and equal the body's method."));
    }
    if (NAMED_METHODS.containsKey(name)) {
      Object bodyName = p.getValue(NAMED_METHODS.get(name));
      String headerName = McpHeaders.decodeValue(headers.get(McpHeaders.NAME));
      if (headerName == null || !headerName.equals(bodyName)) {
        throw Refusal.rpc(400, JsonRpc.error(id, JsonRpc.HEADER_MISMATCH, "Header mismatch: Mcp-Name must be sent and equal the body's "
            + NAMED_METHODS.get(name) + "."));
      }
    }
    if (!env.hasId()) {
      return new Turn.Answered(Answer.accepted());
    }
    RpcFailure refused = RequestMeta.fault(name, p, headers, paramHeaders);
    if (refused != null) {
      throw Refusal.rpc(refused.httpStatus(), refused.toMessage(id));
    }
    Object logLevel = meta.getValue(Meta.LOG_LEVEL);
    if (logLevel != null && !(logLevel instanceof String l && LogLevels.valid(l))) {
      throw Refusal.rpc(200, JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "_meta." + Meta.LOG_LEVEL + " must be one of "
          + String.join(", ", LogLevels.ORDER) + "."));
    }
    Object capabilities = meta.getValue(Meta.CAPABILITIES);
    Object inputResponses = p.getValue("inputResponses");
    Object progressToken = meta.getValue("progressToken");
    // this era has no server requests: a client's capabilities never call for a stream
    boolean stream = McpMethods.SUBSCRIPTIONS_LISTEN.equals(name)
        || (Eras.mayPrecedeResponse(progressToken, (String) logLevel, null) && RequestGuards.accepts(headers.get(HttpHeaders.ACCEPT), "text/event-stream"));
    ResponseChannel channel = stream ? channels.sse(null) : channels.json();
    return new Turn.Run(new Call(true, who.caller(), who.database(), null, null, id, name, p, channel, v,
        capabilities instanceof JsonObject c ? c : new JsonObject(), (String) logLevel, progressToken,
        inputResponses instanceof JsonObject ir ? ir : null, new Cancellation(), who.atNanos(), TraceParents.of(headers, meta),
        who.toolset()));
  }
}
