package dev.tidemark.gateway.impl.resource;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.gateway.McpExtension;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.jsonrpc.Params;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.method.Extensions;
import dev.tidemark.gateway.impl.method.MethodTable;
import dev.tidemark.gateway.impl.service.ServiceClient;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Resources as views over read tools, run as the caller: {@code tidemark://table/{table}} is
 * describe_table, {@code tidemark://row/{table}/{key}} get_row, {@code tidemark://schema}
 * list_tables. So a resource shows exactly what the caller may read, and a subscription to
 * something the caller cannot read is refused by the same check.
 */
public final class ResourceMethods {

  private final List<McpExtension> extensions;
  private final ServiceClient services;
  private final Subscriptions subscriptions;
  private final SubscriptionHolders holders;

  public ResourceMethods(List<McpExtension> extensions, ServiceClient services, Subscriptions subscriptions, SubscriptionHolders holders) {
    this.extensions = List.copyOf(extensions);
    this.services = services;
    this.subscriptions = subscriptions;
    this.holders = holders;
  }

  public Future<JsonObject> list(Call call) {
    return Future.succeededFuture(MethodTable.cacheable(call, new JsonObject().put("resources", ResourceCatalog.resources(extensions)), 0, "private"));
  }

  public Future<JsonObject> templates(Call call) {
    return Future.succeededFuture(MethodTable.cacheable(call,
        new JsonObject().put("resourceTemplates", ResourceCatalog.templates(extensions)), 60_000, "public"));
  }

  public Future<JsonObject> read(Call call) {
    String uri = Params.requireString(call.params(), "uri");
    if (uri.startsWith(ResourceUris.DOCS_PREFIX)) {
      String page = DocsResources.read(uri.substring(ResourceUris.DOCS_PREFIX.length()));
      return page == null ? Future.failedFuture(notFound(call, uri)) : Future.succeededFuture(MethodTable.cacheable(call, new JsonObject()
          .put("contents", new JsonArray().add(new JsonObject().put("uri", uri).put("mimeType", "text/markdown").put("text", page))),
          3_600_000, "public"));
    }
    return databaseResource(call, uri).compose(reply -> {
      if (reply == null) {
        return Extensions.firstOf(extensions, e -> e.readResource(uri)).compose(contents -> contents == null
            ? Future.failedFuture(notFound(call, uri))
            : Future.succeededFuture(MethodTable.cacheable(call, new JsonObject().put("contents", new JsonArray(contents)), 0, "private")));
      }
      if (reply.isError()) {
        return Future.failedFuture(notThere(reply) ? notFound(call, uri) : failed(reply));
      }
      return Future.succeededFuture(MethodTable.cacheable(call, new JsonObject().put("contents", new JsonArray().add(new JsonObject()
          .put("uri", uri).put("mimeType", "application/json").put("text", reply.structured().encode()))), 0, "private"));
    });
  }

  /**
   * {@code resources/subscribe} ({@code on}) and {@code resources/unsubscribe} of a 2025-11-25
   * session. A subscription is counted against the session's and the caller's limits before it is
   * added, and refused, changing nothing, past either.
   */
  public Future<JsonObject> subscribe(Call call, boolean on) {
    String uri = Params.requireString(call.params(), "uri");
    String target = Subscriptions.sessionTarget(call.sessionId(), uri);
    String callerId = call.caller().id();
    return canonical(call, uri).compose(key -> {
      if (!on) {
        String kept = key == null ? uri : key;
        return subscriptions.remove(call.database(), kept, target)
            .compose(v -> holders.removeForSession(callerId, call.sessionId(), new SubscriptionHolders.Held(call.database(), kept, uri)))
            .map(new JsonObject());
      }
      if (key == null) {
        return Future.failedFuture(notFound(call, uri));
      }
      SubscriptionHolders.Held held = new SubscriptionHolders.Held(call.database(), key, uri);
      return holders.addForSession(callerId, call.sessionId(), held)
          .compose(added -> subscriptions.add(call.database(), key, target)
              // not subscribed after all: it counts no more
              .recover(err -> (added ? holders.removeForSession(callerId, call.sessionId(), held) : Future.<Void>succeededFuture())
                  .transform(x -> Future.failedFuture(err))))
          .map(new JsonObject());
    });
  }

  /**
   * A resource method that the tool behind it could not answer for a reason other than the
   * resource (no query service running, a timeout): -32603 with the tool error's code and message,
   * and in {@code data} the code and whether the same request may succeed later.
   */
  public static RpcFailure failed(ToolReply reply) {
    String code = reply.error().getString("code");
    boolean retriable = ErrorCode.of(code).map(ErrorCode::retriable).orElse(false);
    return new RpcFailure(JsonRpc.INTERNAL_ERROR, code + ": " + reply.error().getString("message"), 200,
        new JsonObject().put("code", code).put("retriable", retriable));
  }

  static RpcFailure notFound(Call call, String uri) {
    // the 2026-07-28 revision replaced -32002 with -32602 for an unknown resource
    return new RpcFailure(call.modern() ? JsonRpc.INVALID_PARAMS : JsonRpc.RESOURCE_NOT_FOUND,
        "Resource not found; resources/list and resources/templates/list show what exists.", 200, new JsonObject().put("uri", uri));
  }

  /** The tool reply for a database resource; null when {@code uri} is not one. */
  private Future<ToolReply> databaseResource(Call call, String uri) {
    if (uri.equals(ResourceUris.SCHEMA)) {
      return services.read(call, ToolCatalog.LIST_TABLES, new JsonObject());
    }
    if (uri.equals(ResourceUris.CHANGES)) {
      return services.read(call, ToolCatalog.STATUS, new JsonObject()).map(reply -> reply.isError() ? reply
          : ToolReply.ok("changes", new JsonObject().put("generation", reply.structured().getString("changelog_head", "unknown"))));
    }
    ResourceUris.Parsed parsed = ResourceUris.parse(uri);
    if (parsed == null) {
      return Future.succeededFuture(null);
    }
    if (parsed.kind().equals("table")) {
      return services.read(call, ToolCatalog.DESCRIBE_TABLE, new JsonObject().put("table", parsed.table()));
    }
    return services.read(call, ToolCatalog.GET_ROW, new JsonObject().put("table", parsed.table()).put("key", keyArgument(parsed)));
  }

  private static Object keyArgument(ResourceUris.Parsed parsed) {
    return parsed.key().size() == 1 ? parsed.key().get(0) : new JsonArray(new ArrayList<>(parsed.key()));
  }

  private static boolean notThere(ToolReply reply) {
    String code = reply.error().getString("code");
    return ErrorCode.NOT_FOUND.code().equals(code) || ErrorCode.PERMISSION_DENIED.code().equals(code)
        || ErrorCode.INVALID_ARGUMENTS.code().equals(code);
  }

  /**
   * The form a subscription is kept under, so that a change finds it: {@code schema.name} for
   * tables, the key re-encoded for rows. Null when the resource does not exist or the caller
   * cannot read it, which refuses the subscription; failed ({@link #failed}) when the query service
   * could not say, as when none runs.
   */
  public Future<String> canonical(Call call, String uri) {
    if (uri.equals(ResourceUris.SCHEMA) || uri.equals(ResourceUris.CHANGES)
        || (uri.startsWith(ResourceUris.DOCS_PREFIX) && DocsResources.read(uri.substring(ResourceUris.DOCS_PREFIX.length())) != null)) {
      return Future.succeededFuture(uri);
    }
    ResourceUris.Parsed parsed = ResourceUris.parse(uri);
    if (parsed == null) {
      return Extensions.firstOf(extensions, e -> e.readResource(uri)).map(contents -> contents != null ? uri : null);
    }
    return services.read(call, ToolCatalog.DESCRIBE_TABLE, new JsonObject().put("table", parsed.table())).compose(reply -> {
      if (reply.isError()) {
        // a table that is not there refuses the subscription; a query service that is not there fails it, to be sent again
        return notThere(reply) ? Future.succeededFuture(null) : Future.failedFuture(failed(reply));
      }
      String qualified = reply.structured().getString("schema") + "." + reply.structured().getString("name");
      if (parsed.kind().equals("table")) {
        if (Boolean.TRUE.equals(reply.structured().getBoolean("row_level_security"))) {
          // a change to any row would be told to every subscriber, also of rows its policies hide
          return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "This table has row-level security, so it cannot be"
              + " subscribed to as a whole: a notification would tell of rows your policies hide. Subscribe to the rows you read"
              + " (tidemark://row/...), or follow changes_since.", 200, new JsonObject().put("uri", uri)));
        }
        return Future.succeededFuture(ResourceUris.table(qualified));
      }
      if (reply.structured().getJsonArray("primary_key", new JsonArray()).size() != parsed.key().size()) {
        return Future.succeededFuture(null);
      }
      // a row names a resource only when the caller may read it now: under row-level security a
      // subscription to someone else's row would tell when it changes
      return services.read(call, ToolCatalog.GET_ROW, new JsonObject().put("table", qualified).put("key", keyArgument(parsed)))
          .compose(row -> !row.isError() ? Future.succeededFuture(ResourceUris.row(qualified, parsed.key()))
              : notThere(row) ? Future.succeededFuture(null) : Future.failedFuture(failed(row)));
    });
  }
}
