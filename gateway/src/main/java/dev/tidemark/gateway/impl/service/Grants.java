package dev.tidemark.gateway.impl.service;

import dev.tidemark.gateway.impl.service.Grants;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.Service;
import dev.tidemark.contract.ToolCatalog;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a caller may call, in two layers. The role's ceiling ({@code auth.role-tools}) and a
 * read-only token make a tool unknown: nothing the caller could ask for would change that. An
 * OAuth token's scopes make a tool it may not call yet a 403 {@code insufficient_scope} (the MCP
 * step-up), since a token with more scope would be let through.
 */
public final class Grants {

  /** What a caller may do with one tool. */
  public enum Verdict { CALL, UNKNOWN, NEEDS_SCOPE }

  private final Map<String, List<String>> ceilings;
  private final Set<String> migrateRoles;

  /** Grants under which nobody may migrate. */
  public Grants(Map<String, List<String>> ceilings, Collection<String> tools) {
    this(ceilings, tools, List.of());
  }

  /**
   * @param ceilings each role's tools ("*": every one); a role not named has no ceiling
   * @param tools every tool this gateway serves, so that a misspelt ceiling stops the start
   * @param migrateRoles the roles whose callers may use migrate ({@code command.migrate-roles}); for
   *     every other caller it is unknown, whatever the ceiling says
   */
  public Grants(Map<String, List<String>> ceilings, Collection<String> tools, Collection<String> migrateRoles) {
    Set<String> unknown = new TreeSet<>();
    ceilings.values().forEach(list -> list.stream().filter(t -> !t.equals("*") && !tools.contains(t)).forEach(unknown::add));
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_ROLE_TOOLS.key() + " (" + ConfigKey.AUTH_ROLE_TOOLS.envName()
          + ") names tools this server does not have: " + unknown + "; the tools are " + tools);
    }
    this.ceilings = Map.copyOf(ceilings);
    this.migrateRoles = Set.copyOf(migrateRoles);
  }

  /** Whether {@code role}'s ceiling holds {@code tool} (and, for migrate, whether the role may migrate at all). */
  public boolean withinCeiling(String role, String tool) {
    if (ToolCatalog.MIGRATE.equals(tool) && !migrateRoles.contains(role)) {
      return false;
    }
    List<String> allowed = ceilings.get(role);
    return allowed == null || allowed.contains("*") || allowed.contains(tool);
  }

  /** The scope a tool needs: change tools write, every other tool (and an extension's) reads. */
  public static String scopeOf(String tool) {
    return ToolCatalog.find(tool).filter(t -> t.service() == Service.COMMAND).isPresent() ? OAuthConfig.WRITE_SCOPE : OAuthConfig.READ_SCOPE;
  }

  public Verdict verdict(Caller caller, String tool) {
    if (!withinCeiling(caller.pgRole(), tool)) {
      return Verdict.UNKNOWN;
    }
    return byScope(caller, scopeOf(tool));
  }

  /**
   * What a caller may do with a tool its team defined: the tool's own roles say who sees it (the
   * role's ceiling covers the built-in tools only, so a role may be given named tools alone), and
   * a read-only token or the scopes hold as for a built-in tool of its kind.
   */
  public Verdict verdict(Caller caller, dev.tidemark.contract.NamedTool tool) {
    if (!tool.visibleTo(caller)) {
      return Verdict.UNKNOWN;
    }
    return byScope(caller, tool.kind() == dev.tidemark.contract.NamedTool.Kind.CHANGE ? OAuthConfig.WRITE_SCOPE : OAuthConfig.READ_SCOPE);
  }

  private static Verdict byScope(Caller caller, String scope) {
    if (caller.scopes() == null) {
      // a Tidemark token: read-only ones never see the change tools
      return scope.equals(OAuthConfig.WRITE_SCOPE) && caller.access() != Access.READ_WRITE ? Verdict.UNKNOWN : Verdict.CALL;
    }
    return caller.hasScope(scope) ? Verdict.CALL : Verdict.NEEDS_SCOPE;
  }
}
