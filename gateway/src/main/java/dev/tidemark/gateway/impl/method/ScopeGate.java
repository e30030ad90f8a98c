package dev.tidemark.gateway.impl.method;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.http.Challenges;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.service.Grants;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The scopes of an OAuth access token, checked once a request is a call and before anything of it
 * is written, so that a call its token's scopes do not cover is an HTTP 403 with the
 * {@code insufficient_scope} challenge the MCP step-up flow reads. A tool outside the role's
 * ceiling passes here and answers as unknown: no scope could change that.
 */
public final class ScopeGate {

  /** Methods that read the database besides the read tools; each needs the read scope. */
  static final Set<String> READING = Set.of(McpMethods.RESOURCES_LIST, McpMethods.RESOURCES_TEMPLATES_LIST, McpMethods.RESOURCES_READ, McpMethods.RESOURCES_SUBSCRIBE,
      McpMethods.COMPLETION_COMPLETE);

  private final Grants grants;
  private final Challenges challenges;
  private final dev.tidemark.runtime.NamedCatalogs catalogs;

  public ScopeGate(Grants grants, Challenges challenges) {
    this(grants, challenges, null);
  }

  /** @param catalogs the tools each database's team defined, whose scope follows their kind */
  public ScopeGate(Grants grants, Challenges challenges, dev.tidemark.runtime.NamedCatalogs catalogs) {
    this.grants = grants;
    this.challenges = challenges;
    this.catalogs = catalogs;
  }

  /** The named tools of the call's database, when the gateway was given them. */
  private dev.tidemark.contract.NamedCatalog named(Call call) {
    return catalogs == null ? null : catalogs.get(call.database());
  }

  /** Fails with the 403 when {@code call} needs a scope its caller's token lacks; Tidemark tokens always pass. */
  public Future<Void> check(Call call, String databaseInPath) {
    Caller caller = call.caller();
    if (caller.scopes() == null) {
      return Future.succeededFuture();
    }
    String needed = null;
    String what = null;
    dev.tidemark.contract.NamedTool named = call.params().getValue("name") instanceof String n && named(call) != null
        ? named(call).tool(n) : null;
    if (McpMethods.TOOLS_CALL.equals(call.method()) && named != null && grants.verdict(caller, named) == Grants.Verdict.NEEDS_SCOPE) {
      needed = named.kind() == dev.tidemark.contract.NamedTool.Kind.CHANGE ? OAuthConfig.WRITE_SCOPE : OAuthConfig.READ_SCOPE;
      what = "the tool " + named.name();
    } else if (McpMethods.TOOLS_CALL.equals(call.method()) && named == null && call.params().getValue("name") instanceof String tool
        && grants.verdict(caller, tool) == Grants.Verdict.NEEDS_SCOPE) {
      needed = Grants.scopeOf(tool);
      what = "the tool " + tool;
    } else if (READING.contains(call.method()) && !caller.hasScope(OAuthConfig.READ_SCOPE)) {
      needed = OAuthConfig.READ_SCOPE;
      what = call.method();
    }
    if (needed == null) {
      return Future.succeededFuture();
    }
    String scope = String.join(" ", wanted(caller, needed));
    String description = "The access token's scopes do not cover " + what + ", which needs " + needed;
    return Refusal.rpc(403, JsonRpc.error(call.id(), JsonRpc.INVALID_REQUEST, description
            + ". Get a token with scope \"" + scope + "\" from the authorization server and send the request again."))
        .with("WWW-Authenticate", challenges.insufficientScope(scope, databaseInPath, description)).future();
  }

  /** The scopes to ask for: what the token holds of Tidemark's and the one it lacks, so a client that asks for only these loses nothing. */
  static List<String> wanted(Caller caller, String needed) {
    List<String> out = new ArrayList<>();
    for (String s : List.of(OAuthConfig.READ_SCOPE, OAuthConfig.WRITE_SCOPE)) {
      if (s.equals(needed) || caller.hasScope(s)) {
        out.add(s);
      }
    }
    return out;
  }
}
