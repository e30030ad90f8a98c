package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;

/** A service's answer to {@link Actions#HEALTH}: which node answered and whether its dependency is up. */
public record ServiceHealth(String node, boolean up, String detail) {

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("node", node).put("up", up);
    if (detail != null) {
      json.put("detail", detail);
    }
    return json;
  }

  public static ServiceHealth fromJson(JsonObject json) {
    return new ServiceHealth(json.getString("node"), json.getBoolean("up", false), json.getString("detail"));
  }
}
