package dev.tidemark.contract;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Objects;

/**
 * Who is calling: an identity, the PostgreSQL role every statement runs as, the access ceiling and
 * the databases the caller may reach.
 */
public record Caller(String id, String name, String pgRole, Access access, List<String> databases) {

  public Caller {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(pgRole, "pgRole");
    Objects.requireNonNull(access, "access");
    databases = List.copyOf(databases);
  }

  public boolean mayReach(String database) {
    return databases.contains("*") || databases.contains(database);
  }

  public JsonObject toJson() {
    return new JsonObject()
        .put("id", id)
        .put("name", name)
        .put("pg_role", pgRole)
        .put("access", access.wire())
        .put("databases", new JsonArray(databases));
  }

  /** Unknown fields are ignored so that later versions may append fields. */
  public static Caller fromJson(JsonObject json) {
    JsonArray dbs = json.getJsonArray("databases", new JsonArray());
    return new Caller(
        json.getString("id"),
        json.getString("name"),
        json.getString("pg_role"),
        Access.fromWire(json.getString("access")),
        dbs.stream().map(String::valueOf).toList());
  }
}
