package dev.tidemark.contract;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Objects;

/**
 * Who is calling: an identity, the PostgreSQL role every statement runs as, the access ceiling and
 * the databases the caller may reach; for an OAuth access token also the scopes it was granted
 * ({@code scopes} is null for a Tidemark token, whose access alone says what it may do) and the
 * claims of the token that a named tool may bind a parameter from ({@code claims}: the token's
 * claims whose values are text, numbers or booleans; null for a Tidemark token, which has none).
 * {@code validSince} is when the credential that identified the caller began to be valid by the
 * database's clock, in milliseconds since the epoch, or 0 when nothing earlier under the same id
 * was ever made invalid: a token made again under its name keeps its caller id, so only a
 * revocation after this time concerns this credential. It stays on the node that checked the
 * credential, and is not part of the caller's JSON.
 */
public record Caller(String id, String name, String pgRole, Access access, List<String> databases, List<String> scopes,
    JsonObject claims, long validSince) {

  public Caller {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(pgRole, "pgRole");
    Objects.requireNonNull(access, "access");
    databases = List.copyOf(databases);
    scopes = scopes == null ? null : List.copyOf(scopes);
    claims = claims == null || claims.isEmpty() ? null : claims.copy();
  }

  /** A caller whose credential no revocation under its id preceded. */
  public Caller(String id, String name, String pgRole, Access access, List<String> databases, List<String> scopes,
      JsonObject claims) {
    this(id, name, pgRole, access, databases, scopes, claims, 0L);
  }

  /** A caller of a Tidemark token valid since {@code validSince} (see the record's description). */
  public Caller(String id, String name, String pgRole, Access access, List<String> databases, long validSince) {
    this(id, name, pgRole, access, databases, null, null, validSince);
  }

  /**
   * Whether a revocation under this caller's id made at {@code revokedAtMillis} (the database's
   * clock) ended this credential: it did unless the credential was made after it.
   */
  public boolean revokedBy(long revokedAtMillis) {
    return revokedAtMillis > validSince;
  }

  /** A caller without claims. */
  public Caller(String id, String name, String pgRole, Access access, List<String> databases, List<String> scopes) {
    this(id, name, pgRole, access, databases, scopes, null);
  }

  /** A caller of a Tidemark token: not limited by scopes. */
  public Caller(String id, String name, String pgRole, Access access, List<String> databases) {
    this(id, name, pgRole, access, databases, null);
  }

  /** Whether the caller's grant covers {@code scope}: always for a Tidemark token. */
  public boolean hasScope(String scope) {
    return scopes == null || scopes.contains(scope);
  }

  public boolean mayReach(String database) {
    return databases.contains("*") || databases.contains(database);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject()
        .put("id", id)
        .put("name", name)
        .put("pg_role", pgRole)
        .put("access", access.wire())
        .put("databases", new JsonArray(databases));
    if (claims != null) {
      json.put("claims", claims.copy());
    }
    // absent, not null, for a Tidemark token: readers that predate scopes see the same message
    return scopes == null ? json : json.put("scopes", new JsonArray(scopes));
  }

  /** Unknown fields are ignored so that later versions may append fields. */
  public static Caller fromJson(JsonObject json) {
    JsonArray dbs = json.getJsonArray("databases", new JsonArray());
    JsonArray scopes = json.getJsonArray("scopes");
    return new Caller(
        json.getString("id"),
        json.getString("name"),
        json.getString("pg_role"),
        Access.fromWire(json.getString("access")),
        dbs.stream().map(String::valueOf).toList(),
        scopes == null ? null : scopes.stream().map(String::valueOf).toList(),
        json.getValue("claims") instanceof JsonObject claims ? claims : null);
  }
}
