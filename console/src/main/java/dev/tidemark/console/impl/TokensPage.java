package dev.tidemark.console.impl;

import dev.tidemark.auth.TokenStore;
import dev.tidemark.auth.Tokens;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Tokens, for administrators: every token without its secret, a form that creates one (shown once,
 * on the page that answers the form, and kept only hashed), and a revoke form per live token. A
 * revocation reaches every gateway within a second, as {@code tidemark token revoke}'s does.
 */
final class TokensPage {

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final Pattern EXPIRES = Pattern.compile("([1-9][0-9]{0,8})([smhd])");

  private final TidemarkConfig config;
  private final TokenStore tokens;
  private final Forms forms;
  private final String path;

  TokensPage(TidemarkConfig config, TokenStore tokens, Forms forms) {
    this.config = config;
    this.tokens = tokens;
    this.forms = forms;
    this.path = config.console().path();
  }

  Future<Html> list(Req r) {
    return tokens.list().map(all -> {
      Html h = new Html();
      h.el("h2", "Create a token");
      h.open("form", "method", "post", "action", path + "/tokens?database=" + r.database(), "class", "create-token")
          .empty("input", "type", "hidden", "name", Forms.FIELD, "value", forms.token(r.person(), "create-token", "new"))
          .open("label").text("Name ").empty("input", "type", "text", "name", "name", "required", "required", "maxlength", "64",
              "pattern", "[A-Za-z0-9._\\-]{1,64}").close("label")
          .open("label").text("Role ").open("select", "name", "role");
      roles().forEach(role -> h.el("option", role, "value", role));
      h.close("select").close("label")
          .open("label").empty("input", "type", "checkbox", "name", "read_only", "value", "true").text(" read-only").close("label")
          .open("label").text("Databases ").empty("input", "type", "text", "name", "databases", "value", "*").close("label")
          .open("label").text("Expires in ").empty("input", "type", "text", "name", "expires_in", "placeholder", "90d").close("label")
          .el("button", "Create", "type", "submit")
          .close("form");
      h.el("h2", "Tokens").open("table", "class", "tokens").open("thead").open("tr").el("th", "name").el("th", "role").el("th", "access")
          .el("th", "databases").el("th", "created").el("th", "expires").el("th", "state").el("th", "").close("tr").close("thead").open("tbody");
      for (JsonObject t : all) {
        String name = t.getString("name");
        boolean live = t.getValue("revoked_at") == null;
        h.open("tr", "data-token", name).el("td", name).el("td", t.getString("pg_role")).el("td", t.getString("access"))
            .el("td", RowView.value(t.getValue("databases"))).el("td", t.getString("created_at", ""))
            .el("td", t.getString("expires_at", "")).el("td", live ? "live" : "revoked " + t.getString("revoked_at"), "class", "state")
            .open("td");
        if (live) {
          h.open("form", "method", "post", "action", path + "/tokens/" + name + "/revoke?database=" + r.database(), "class", "revoke")
              .empty("input", "type", "hidden", "name", Forms.FIELD, "value", forms.token(r.person(), "revoke-token", name))
              .el("button", "Revoke", "type", "submit")
              .close("form");
        }
        h.close("td").close("tr");
      }
      return h.close("tbody").close("table");
    });
  }

  /** The roles a token may map to: those with a login password configured, since a caller runs as one. */
  private List<String> roles() {
    return config.defaultDatabase().callerPasswords().keySet().stream().sorted().toList();
  }

  Future<Html> create(Req r) {
    String name = r.param("name", 64);
    if (name == null || !NAME.matcher(name).matches()) {
      throw Refusal.badInput("Name the token with 1 to 64 letters, digits, '.', '_' or '-'.");
    }
    String role = r.param("role", 63);
    if (role == null || !roles().contains(role)) {
      throw Refusal.badInput("Pick a role from the list: a token's caller logs in as its role, so only roles with a configured login"
          + " password (database.caller-passwords) are offered.");
    }
    List<String> databases = databases(r.param("databases", 1000));
    Instant expires = expires(r.param("expires_in", 12));
    Access access = "true".equals(r.param("read_only")) ? Access.READ_ONLY : Access.READ_WRITE;
    return tokens.list().compose(all -> {
      if (all.stream().anyMatch(t -> name.equals(t.getString("name")) && t.getValue("revoked_at") == null)) {
        return Future.failedFuture(new Refusal(409, dev.tidemark.contract.ErrorCode.INVALID_ARGUMENTS, "Name taken", "A live token"
            + " is named " + name + " already. Revoke it first, or choose another name; nothing was created."));
      }
      String token = Tokens.generate();
      return tokens.put(name, token, role, access, databases, expires).map(id -> new Html()
          .open("section", "class", "new-token", "data-token", name)
          .el("p", "Token " + name + " was created. It is shown this once: copy it now, since only its hash is kept.", "class", "lead")
          .el("code", token, "class", "secret", "id", "new-token")
          .open("p").el("a", "Back to the tokens", "href", path + "/tokens?database=" + r.database()).close("p")
          .close("section"));
    });
  }

  Future<Html> revoke(Req r, String name) {
    return tokens.revoke(name)
        .recover(err -> Future.failedFuture(new Refusal(404, dev.tidemark.contract.ErrorCode.NOT_FOUND, "No such token",
            "No live token is named " + name + "; it may have been revoked already. Nothing was done.")))
        .map(v -> new Html().open("section", "class", "revoked", "data-token", name)
            .el("p", "Token " + name + " is revoked: every gateway refuses it, and ends its streams and sessions, within a second.", "class", "lead")
            .open("p").el("a", "Back to the tokens", "href", path + "/tokens?database=" + r.database()).close("p")
            .close("section"));
  }

  private List<String> databases(String given) {
    if (given == null || given.equals("*")) {
      return List.of("*");
    }
    List<String> out = new ArrayList<>();
    for (String db : Arrays.stream(given.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList()) {
      if (!db.equals("*") && !config.databaseNames().contains(db)) {
        throw Refusal.badInput("Database " + db + " is not served; the served ones are " + config.databaseNames() + ", or * for all.");
      }
      out.add(db);
    }
    return out.isEmpty() ? List.of("*") : out;
  }

  /** A number and s, m, h or d, as tidemark token create --expires-in takes it; null for a token that does not expire. */
  static Instant expires(String given) {
    if (given == null) {
      return null;
    }
    Matcher m = EXPIRES.matcher(given);
    if (!m.matches()) {
      throw Refusal.badInput("Expires in takes a number and s, m, h or d, such as 90d or 12h; leave it empty for no expiry.");
    }
    long seconds = Long.parseLong(m.group(1)) * switch (m.group(2)) {
      case "s" -> 1L;
      case "m" -> 60L;
      case "h" -> 3600L;
      default -> 86_400L;
    };
    return Instant.now().plusSeconds(seconds);
  }
}
