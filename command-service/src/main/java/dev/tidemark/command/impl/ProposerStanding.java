package dev.tidemark.command.impl;

import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.util.Arrays;

/**
 * Whether a proposal's proposer may still make its change, as far as Tidemark's own records say:
 * a proposal is applied as its proposer, so a person's approval must not lend a caller whose
 * token ended the right to write. What its role's privileges allow, PostgreSQL says when the
 * change runs again as that role.
 *
 * @param callerId the proposer's caller id: a Tidemark token's id, or {@code oauth:<subject>}
 * @param proposalRole the PostgreSQL role the proposal was made as
 * @param tokenFound whether {@code tidemark.api_token} has the proposer's token
 * @param tokenReplaced whether the token was replaced by one of the same name since the proposal
 * @param tokenDatabases the databases the token may reach now
 * @param roleExists whether the proposal's role still exists
 */
public record ProposerStanding(String callerId, String proposalRole, boolean tokenFound, boolean tokenRevoked, boolean tokenReplaced,
                               boolean tokenExpired, String tokenRole, String tokenAccess, String[] tokenDatabases, boolean roleExists) {

  /** How an OAuth caller's id begins (a Tidemark token's name never does). */
  static final String OAUTH = "oauth:";

  /** The columns {@link #of} reads, beside a proposal {@code p}, its token {@code t} (left-joined on the caller id). */
  public static final String COLUMNS = """
      t.id IS NOT NULL AS token_found, t.revoked_at IS NOT NULL AS token_revoked,
      coalesce(t.invalidated_at > p.created_at, false) AS token_replaced, coalesce(t.expires_at <= now(), false) AS token_expired,
      t.pg_role AS token_role, t.access AS token_access, t.databases AS token_databases,
      EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = p.pg_role) AS role_exists""";

  /** The standing read by {@link #COLUMNS}. */
  public static ProposerStanding of(Row r) {
    return new ProposerStanding(r.getString("caller_id"), r.getString("pg_role"), Boolean.TRUE.equals(r.getBoolean("token_found")),
        Boolean.TRUE.equals(r.getBoolean("token_revoked")), Boolean.TRUE.equals(r.getBoolean("token_replaced")),
        Boolean.TRUE.equals(r.getBoolean("token_expired")), r.getString("token_role"), r.getString("token_access"),
        r.getArrayOfStrings("token_databases"), Boolean.TRUE.equals(r.getBoolean("role_exists")));
  }

  /**
   * Why the proposer may no longer make the change, or null when nothing Tidemark records says so.
   *
   * @param database the served database the proposal is of
   * @param oauth the OAuth settings of the deciding process's config: an OAuth caller has no
   *     token Tidemark keeps, only a role the issuer's tokens may name
   */
  public String voidReason(String database, OAuthConfig oauth) {
    if (!roleExists) {
      return "its PostgreSQL role " + proposalRole + " no longer exists";
    }
    if (callerId.startsWith(OAUTH)) {
      if (!oauth.enabled()) {
        return "it signed in with an OAuth access token, and this database's config no longer accepts any (auth.oauth.issuer is empty)";
      }
      return oauth.roles().contains(proposalRole) ? null
          : "it signed in with an OAuth access token as role " + proposalRole + ", which auth.oauth.roles no longer lists";
    }
    if (!tokenFound) {
      return "its token no longer exists";
    }
    if (tokenRevoked) {
      return "its token was revoked";
    }
    if (tokenReplaced) {
      return "its token was replaced by a new token of the same name";
    }
    if (tokenExpired) {
      return "its token expired";
    }
    if (!proposalRole.equals(tokenRole)) {
      return "its token now maps to another PostgreSQL role than " + proposalRole;
    }
    if (!"read-write".equals(tokenAccess)) {
      return "its token may now only read";
    }
    if (tokenDatabases == null || !Arrays.asList(tokenDatabases).contains("*") && !Arrays.asList(tokenDatabases).contains(database)) {
      return "its token may no longer reach database " + database;
    }
    return null;
  }
}
