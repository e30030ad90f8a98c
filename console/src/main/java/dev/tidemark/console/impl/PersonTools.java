package dev.tidemark.console.impl;

import dev.tidemark.contract.ToolCalls;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.LocalDelivery;
import dev.tidemark.contract.Service;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;

/**
 * Tool calls the console makes on a person's behalf, exactly as an agent's reach the services:
 * a {@link ToolRequest} of the person's own caller over the event bus, so that a read runs as the
 * person's PostgreSQL role and a change plans and commits as any change does. The limits the
 * gateway puts on an agent hold here too: the databases the caller may reach, the role's tool
 * ceiling (auth.role-tools), read-only access, and an OAuth token's scopes.
 */
final class PersonTools {

  private final Vertx vertx;
  private final TidemarkConfig config;

  PersonTools(Vertx vertx, TidemarkConfig config) {
    this.vertx = vertx;
    this.config = config;
    LocalDelivery.register(vertx);
  }

  /** Refuses, as a page, what the caller's own limits would refuse an agent. */
  void check(Caller caller, String database, String tool) {
    ToolDescriptor d = ToolCatalog.find(tool).orElseThrow();
    boolean change = d.service() == Service.COMMAND;
    if (!caller.mayReach(database)) {
      throw Refusal.notAllowed("Your sign-in may not reach database " + database + ". Choose one of the databases your token names.");
    }
    List<String> ceiling = config.roleTools().get(caller.pgRole());
    if (ceiling != null && !ceiling.contains("*") && !ceiling.contains(tool)) {
      throw Refusal.notAllowed("Your role " + caller.pgRole() + " may not use " + tool + " (auth.role-tools), which this needs.");
    }
    if (change && caller.access() != Access.READ_WRITE) {
      throw Refusal.notAllowed("Your sign-in may only read (a read-only token), and this writes. Sign in with one that may write.");
    }
    String scope = change ? OAuthConfig.WRITE_SCOPE : OAuthConfig.READ_SCOPE;
    if (!caller.hasScope(scope)) {
      throw Refusal.notAllowed("Your access token was not granted the scope " + scope + ", which this needs. Sign in again and grant it.");
    }
  }

  /** The tool's reply as the service gave it (an error reply included); the bus's own failures as UNAVAILABLE replies. */
  Future<ToolReply> call(Caller caller, String database, String tool, JsonObject arguments) {
    try {
      check(caller, database, tool);
    } catch (Refusal r) {
      return Future.failedFuture(r);
    }
    ToolDescriptor d = ToolCatalog.find(tool).orElseThrow();
    ToolRequest request = new ToolRequest(UUID.randomUUID().toString(), database, tool, arguments, caller);
    return ToolCalls.ask(vertx, Addresses.forService(d.service(), database), request, config.busSendTimeoutMs())
        .recover(err -> Future.succeededFuture(ToolReply.failed(new dev.tidemark.contract.ToolException(
            dev.tidemark.contract.ErrorCode.UNAVAILABLE, "No " + d.service().name().toLowerCase(java.util.Locale.ROOT)
                + " service answered (" + err.getMessage() + "). " + dev.tidemark.contract.ErrorCode.UNAVAILABLE.hint()))));
  }
}
