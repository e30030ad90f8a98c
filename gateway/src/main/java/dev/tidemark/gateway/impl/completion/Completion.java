package dev.tidemark.gateway.impl.completion;

import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.service.ServiceClient;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code completion/complete} for the arguments of prompts and resource templates: table names,
 * column names and single-column keys, each read as the caller, so that a completion never shows
 * what the caller could not read.
 */
public final class Completion {

  /** The most values one completion lists; {@code hasMore} says when there were more. */
  static final int MAX_VALUES = 100;

  private final ServiceClient services;

  public Completion(ServiceClient services) {
    this.services = services;
  }

  public Future<JsonObject> complete(Call call) {
    Object ref = call.params().getValue("ref");
    Object argument = call.params().getValue("argument");
    if (!(ref instanceof JsonObject r) || !(argument instanceof JsonObject a) || !(a.getValue("name") instanceof String)
        || !(a.getValue("value") instanceof String)) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS,
          "completion/complete needs ref {type, name|uri} and argument {name, value}."));
    }
    String type = r.getValue("type") instanceof String t ? t : "";
    if (!type.equals("ref/prompt") && !type.equals("ref/resource")) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "ref.type must be ref/prompt or ref/resource."));
    }
    String argName = a.getString("name");
    String prefix = a.getString("value");
    Object contextArgs = call.params().getValue("context") instanceof JsonObject ctx ? ctx.getValue("arguments") : null;
    String contextTable = contextArgs instanceof JsonObject ca && ca.getValue("table") instanceof String t ? t : null;
    Future<List<String>> candidates = switch (argName) {
      case "table" -> names(call, ToolCatalog.LIST_TABLES, new JsonObject(), "tables");
      case "column" -> contextTable == null ? Future.succeededFuture(List.of())
          : names(call, ToolCatalog.DESCRIBE_TABLE, new JsonObject().put("table", contextTable), "columns");
      case "key" -> contextTable == null ? Future.succeededFuture(List.of()) : keyValues(call, contextTable, prefix);
      default -> Future.succeededFuture(List.of());
    };
    return candidates.map(all -> result(all, prefix));
  }

  static JsonObject result(List<String> candidates, String prefix) {
    List<String> matching = candidates.stream().filter(v -> v.startsWith(prefix)).toList();
    JsonArray values = new JsonArray(matching.stream().limit(MAX_VALUES).map(Object.class::cast).toList());
    return new JsonObject().put("completion", new JsonObject()
        .put("values", values).put("total", matching.size()).put("hasMore", matching.size() > MAX_VALUES));
  }

  /** The {@code name} of each object in the read tool's {@code field} array, as the caller sees them. */
  private Future<List<String>> names(Call call, String tool, JsonObject arguments, String field) {
    return services.read(call, tool, arguments).map(reply -> {
      List<String> names = new ArrayList<>();
      if (!reply.isError()) {
        for (Object o : reply.structured().getJsonArray(field, new JsonArray())) {
          names.add(((JsonObject) o).getString("name"));
        }
      }
      return names;
    });
  }

  /**
   * Keys of a single-column primary key that start with {@code prefix}, read as the caller with
   * list_rows and a like filter; composite keys are not completed.
   */
  private Future<List<String>> keyValues(Call call, String table, String prefix) {
    return services.read(call, ToolCatalog.DESCRIBE_TABLE, new JsonObject().put("table", table)).compose(described -> {
      JsonArray pk = described.isError() ? new JsonArray() : described.structured().getJsonArray("primary_key", new JsonArray());
      if (pk.size() != 1) {
        return Future.succeededFuture(List.<String>of());
      }
      String column = pk.getString(0);
      JsonObject where = new JsonObject().put("column", column).put("op", "like").put("value", likePrefix(prefix));
      return services.read(call, ToolCatalog.LIST_ROWS, new JsonObject().put("table", table).put("columns", new JsonArray().add(column))
              .put("order", new JsonArray().add(column)).put("limit", MAX_VALUES + 1).put("where", where))
          .map(rows -> {
            List<String> keys = new ArrayList<>();
            if (!rows.isError()) {
              for (Object row : rows.structured().getJsonArray("rows", new JsonArray())) {
                Object v = row instanceof JsonObject o ? o.getValue(column) : null;
                if (v != null) {
                  keys.add(String.valueOf(v));
                }
              }
            }
            return keys;
          });
    });
  }

  /** A like pattern that matches values starting with {@code prefix} taken literally. */
  static String likePrefix(String prefix) {
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
  }
}
