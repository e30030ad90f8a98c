package dev.tidemark.console.impl;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.TokenStore;
import dev.tidemark.command.Proposals;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.KeyRingSource;
import dev.tidemark.database.Pools;
import dev.tidemark.gateway.GatewayActivity;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's routes on the gateway's router, and the steps every request takes: the security
 * headers; for a page, the sign-in; for a form, the Origin check, the sign-in, who may do it, and
 * the form token (taken once), before anything is done. A refusal at any step is a page that says
 * what was refused and what to do, and nothing was done.
 */
public final class ConsoleRoutes {

  private static final Logger LOG = LoggerFactory.getLogger(ConsoleRoutes.class);
  /** No script at all, no inline style, nothing from elsewhere; forms post only to the console. */
  static final String CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none';"
      + " base-uri 'none'";
  private static final String PRE_COOKIE = "tidemark_console_pre";
  private static final long BODY_LIMIT = 64 * 1024;

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Map<String, Pool> pools;
  private final Authenticator authenticator;
  private final GatewayActivity activity;
  private final String path;
  private final Layout layout;
  // set once by start, before any instance mounts: the instances are deployed only after it completed
  private Sealer sealer;
  private SignIns signIns;
  private Forms forms;
  private OAuthSignIn oauth;
  private ApprovalsPage approvals;
  private AuditPage audit;
  private AgentsPage agents;
  private TokensPage tokens;
  private Buffer css;

  public ConsoleRoutes(Vertx vertx, NodeInfo node, TidemarkConfig config, Map<String, Pool> pools, Authenticator authenticator,
      GatewayActivity activity) {
    this.vertx = vertx;
    this.node = node;
    this.config = config;
    this.pools = pools;
    this.authenticator = authenticator;
    this.activity = activity;
    this.path = config.console().path();
    this.layout = new Layout(path, config.databaseNames());
  }

  /**
   * Reads each database's key ring and builds the pages, once per node, on the gateway's node-wide
   * context, so that its timers (the key rings', the activity board's) end with the gateway. The
   * pages keep nothing per instance: every instance's router then gets the same handlers ({@link #mount}).
   */
  public Future<Void> start() {
    Map<String, Future<KeyRingSource>> rings = new LinkedHashMap<>();
    for (String db : config.databaseNames()) {
      rings.put(db, KeyRingSource.start(vertx, pools.get(db), config.keysRefreshSeconds()));
    }
    return Future.all(List.copyOf(rings.values())).compose(x -> {
      Map<String, KeyRingSource> keys = new HashMap<>();
      Map<String, Proposals> proposals = new HashMap<>();
      rings.forEach((db, ring) -> {
        keys.put(db, ring.result());
        proposals.put(db, new Proposals(vertx, config.forDatabase(db), pools.get(db), ring.result()));
      });
      Pool main = pools.get(config.defaultDatabase().name());
      sealer = new Sealer(keys.get(config.defaultDatabase().name()));
      String publicUrl = config.http().publicUrl();
      signIns = new SignIns(vertx, sealer, main, path, publicUrl.startsWith("https://"), config.console().sessionSeconds());
      forms = new Forms(vertx, sealer);
      oauth = config.oauth().enabled() ? new OAuthSignIn(vertx, config, authenticator, sealer, signIns) : null;
      TokenStore tokenStore = TokenStore.create(main);
      ActivityBoard board = new ActivityBoard(vertx, node.nodeId(), activity);
      board.start();
      approvals = new ApprovalsPage(config, proposals, forms);
      // the audit reads each database's changelog where it is stored (database.changelog-url)
      Map<String, Pool> changelogs = new HashMap<>();
      pools.forEach((db, pool) -> changelogs.put(db, Pools.changelog(vertx, config.forDatabase(db).database(), pool)));
      audit = new AuditPage(config, changelogs, keys, new PersonTools(vertx, config), forms);
      agents = new AgentsPage(vertx, config, pools, tokenStore, board);
      tokens = new TokensPage(config, tokenStore, forms);
      css = resource("static/console.css");
      return Future.<Void>succeededFuture();
    });
  }

  private static Buffer resource(String name) {
    try (InputStream in = ConsoleRoutes.class.getResourceAsStream("/dev/tidemark/console/" + name)) {
      return Buffer.buffer(in.readAllBytes());
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException("the console's " + name + " is missing from the jar", e);
    }
  }

  /** Adds the console's routes to one gateway instance's router; only once {@link #start} completed. */
  public void mount(Router router) {
    router.route(path).handler(this::headers);
    router.route(path + "/*").handler(this::headers);
    router.post(path + "/*").handler(BodyHandler.create(false).setBodyLimit(BODY_LIMIT));
    router.get(path).handler(ctx -> redirect(ctx, path + "/approvals"));
    router.get(path + "/").handler(ctx -> redirect(ctx, path + "/approvals"));
    router.get(path + "/static/console.css").handler(ctx -> ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "text/css; charset=utf-8")
        .putHeader(HttpHeaders.CACHE_CONTROL, "max-age=300").end(css));
    router.get(path + "/sign-in").handler(this::signInPage);
    router.post(path + "/sign-in").handler(this::tokenSignIn);
    router.get(path + "/oauth/start").handler(this::oauthStart);
    router.get(path + "/oauth/callback").handler(this::oauthCallback);
    router.post(path + "/sign-out").handler(this::signOut);

    router.get(path + "/approvals").handler(page("approvals", "Approvals", false, approvals::list));
    router.post(path + "/approvals/:id/approve").handler(action("approvals", "Approval", "approve", false,
        r -> approvals.authorize(r, id(r)), r -> r.database() + "|" + id(r), (r, nonce) -> approvals.approve(r, id(r))));
    router.post(path + "/approvals/:id/reject").handler(action("approvals", "Rejection", "reject", false,
        r -> approvals.authorize(r, id(r)), r -> r.database() + "|" + id(r), (r, nonce) -> approvals.reject(r, id(r))));

    router.get(path + "/audit").handler(page("audit", "Audit trail", false, audit::list));
    router.get(path + "/audit/undo").handler(page("audit", "Undo a transaction", false, audit::planUndo));
    router.post(path + "/audit/undo").handler(action("audit", "Undo a transaction", "undo", false,
        r -> Future.succeededFuture(), audit::confirmTarget, audit::commitUndo));

    router.get(path + "/agents").handler(page("agents", "Agents at work", true, agents::render));
    router.get(path + "/tokens").handler(page("tokens", "Tokens", true, tokens::list));
    router.post(path + "/tokens").handler(action("tokens", "New token", "create-token", true,
        r -> Future.succeededFuture(), r -> "new", (r, nonce) -> tokens.create(r)));
    router.post(path + "/tokens/:name/revoke").handler(action("tokens", "Token revoked", "revoke-token", true,
        r -> Future.succeededFuture(), r -> r.ctx().pathParam("name"), (r, nonce) -> tokens.revoke(r, r.ctx().pathParam("name"))));

    router.route(path + "/*").handler(ctx -> send(ctx, 404, layout.refusal(null, new Refusal(404, ErrorCode.NOT_FOUND, "Not found",
        "The console has no page at " + ctx.request().path() + ". Start from the approvals."), config.defaultDatabase().name(), false, "")));
  }

  private static String id(Req r) {
    return r.ctx().pathParam("id");
  }

  /**
   * What every console answer carries: no script may run, nothing may frame it, nothing is cached, no
   * URL leaks to another site (same-origin, not no-referrer: with no-referrer a browser sends its
   * own forms with Origin: null, which the Origin check refuses).
   */
  private void headers(RoutingContext ctx) {
    ctx.response().putHeader("Content-Security-Policy", CSP)
        .putHeader("X-Content-Type-Options", "nosniff")
        .putHeader("X-Frame-Options", "DENY")
        .putHeader("Referrer-Policy", "same-origin")
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-store");
    ctx.next();
  }

  private Req req(RoutingContext ctx, Person person) {
    String database = ctx.request().getParam("database");
    if (database == null || database.isEmpty()) {
      database = config.defaultDatabase().name();
    } else if (!config.databaseNames().contains(database)) {
      throw new Refusal(404, ErrorCode.NOT_FOUND, "No such database", "This cluster serves no database named " + database
          + "; it serves " + config.databaseNames() + ".");
    }
    return new Req(ctx, person, database, config.console().isAdministrator(person.name()));
  }

  private static void adminOnly(Req r) {
    if (!r.administrator()) {
      throw Refusal.notAllowed("Only the console's administrators (console.administrators) see this page, and you ("
          + r.person().name() + ") are not one. Ask one to add you.");
    }
  }

  private Handler<RoutingContext> page(String name, String title, boolean administrators, Function<Req, Future<Html>> view) {
    return ctx -> {
      if (!SignIns.hasCookie(ctx)) {
        redirect(ctx, path + "/sign-in");
        return;
      }
      AtomicReference<Req> seen = new AtomicReference<>();
      signIns.current(ctx).compose(person -> {
        Req r = req(ctx, person);
        seen.set(r);
        if (administrators) {
          adminOnly(r);
        }
        return view.apply(r).map(html -> layout.page(person, title, name, r.database(), r.administrator(), html, signOutToken(person)));
      }).onSuccess(html -> send(ctx, 200, html)).onFailure(err -> fail(ctx, seen.get(), err));
    };
  }

  /**
   * A form's request: the Origin must be the console's own, the sign-in valid, the person allowed
   * ({@code authorize}), and the form token one this sign-in got for {@code action} on
   * {@code target}, sent once; only then does {@code run} do anything.
   */
  private Handler<RoutingContext> action(String name, String title, String action, boolean administrators,
      Function<Req, Future<?>> authorize, Function<Req, String> target, BiFunction<Req, String, Future<Html>> run) {
    return ctx -> {
      AtomicReference<Req> seen = new AtomicReference<>();
      sameOrigin(ctx).compose(v -> signIns.current(ctx)).compose(person -> {
        Req r = req(ctx, person);
        seen.set(r);
        if (administrators) {
          adminOnly(r);
        }
        return authorize.apply(r)
            .compose(x -> forms.take(person, ctx.request().getFormAttribute(Forms.FIELD), action, target.apply(r)))
            .compose(nonce -> run.apply(r, nonce))
            .map(html -> layout.page(person, title, name, r.database(), r.administrator(), html, signOutToken(person)));
      }).onSuccess(html -> send(ctx, 200, html)).onFailure(err -> fail(ctx, seen.get(), err));
    };
  }

  /** A form sent from another site is refused whatever it carries; a browser names its origin on every POST. */
  private Future<Void> sameOrigin(RoutingContext ctx) {
    String origin = ctx.request().getHeader(HttpHeaders.ORIGIN);
    String site = ctx.request().getHeader("Sec-Fetch-Site");
    boolean ok = origin == null ? site == null || site.equals("same-origin") : origin.equals(ownOrigin(ctx)) || origin.equals(publicOrigin());
    return ok ? Future.succeededFuture() : Future.failedFuture(Refusal.form("The form was sent from another site (" + (origin != null
        ? origin : "Sec-Fetch-Site " + site) + "), not from a console page: a forged request. Nothing was done."));
  }

  private static String ownOrigin(RoutingContext ctx) {
    return ctx.request().scheme() + "://" + ctx.request().authority();
  }

  private String publicOrigin() {
    String url = config.http().publicUrl();
    if (url.isEmpty()) {
      return "";
    }
    URI u = URI.create(url);
    return u.getScheme() + "://" + u.getRawAuthority();
  }

  private String signOutToken(Person person) {
    return forms.token(person, "sign-out", person.sid());
  }

  private void signInPage(RoutingContext ctx) {
    Html h = new Html();
    if (oauth != null) {
      h.el("p", "Sign in with your organisation's account at " + config.oauth().issuer() + ". You see what your PostgreSQL role may read.",
          "class", "lead");
      h.open("p").el("a", "Sign in with " + config.oauth().issuer(), "href", path + "/oauth/start", "class", "button", "id", "oauth-sign-in")
          .close("p");
    } else {
      String nonce = SignIns.randomId(18);
      ctx.response().addCookie(signIns.cookie(PRE_COOKIE, sealer.seal("pre", "console", new JsonObject().put("n", nonce)
          .put("e", System.currentTimeMillis() + Forms.LIFETIME_MS)), path, CookieSameSite.STRICT).setMaxAge(Forms.LIFETIME_MS / 1000));
      h.el("p", "Sign in with an administrator's token (console.administrators). It is checked as the MCP endpoint checks it, and never"
          + " stored in your browser.", "class", "lead");
      h.open("form", "method", "post", "action", path + "/sign-in", "class", "sign-in")
          .empty("input", "type", "hidden", "name", "pre", "value", nonce)
          .open("label").text("Token ").empty("input", "type", "password", "name", "token", "required", "required", "autocomplete", "off",
              "id", "token").close("label")
          .el("button", "Sign in", "type", "submit")
          .close("form");
    }
    send(ctx, 200, layout.page(null, "Sign in", "sign-in", config.defaultDatabase().name(), false, h, ""));
  }

  private void tokenSignIn(RoutingContext ctx) {
    sameOrigin(ctx).compose(v -> {
      if (oauth != null) {
        return Future.failedFuture(Refusal.signIn("This cluster signs people in through " + config.oauth().issuer() + ", not with tokens."
            + " Use the sign-in page's link."));
      }
      io.vertx.core.http.Cookie pre = ctx.request().getCookie(PRE_COOKIE);
      JsonObject sealed = pre == null ? null : sealer.open("pre", "console", pre.getValue()).orElse(null);
      String sent = ctx.request().getFormAttribute("pre");
      if (sealed == null || sent == null || !sent.equals(sealed.getString("n")) || sealed.getLong("e", 0L) < System.currentTimeMillis()) {
        return Future.failedFuture(Refusal.form("The sign-in form was not the one this browser was given (or it is over an hour old)."
            + " Nothing was done; open the sign-in page again."));
      }
      return SignIns.byToken(authenticator, ctx.request().getFormAttribute("token"));
    }).compose(caller -> {
      if (!config.console().isAdministrator(caller.name())) {
        return Future.failedFuture(Refusal.notAllowed("The token " + caller.name() + " is not an administrator's (console.administrators),"
            + " so it does not sign in to the console. Use an administrator's token."));
      }
      return signIns.tokenExpiry(caller.id()).map(notAfter -> {
        ctx.response().addCookie(signIns.cookie(PRE_COOKIE, "", path, CookieSameSite.STRICT).setMaxAge(0));
        signIns.start(ctx, caller, Person.TOKEN, caller.id(), notAfter);
        redirect(ctx, path + "/approvals");
        return (Void) null;
      });
    }).onFailure(err -> fail(ctx, null, err));
  }

  private void oauthStart(RoutingContext ctx) {
    if (oauth == null) {
      redirect(ctx, path + "/sign-in");
      return;
    }
    oauth.start(ctx).onFailure(err -> fail(ctx, null, err));
  }

  private void oauthCallback(RoutingContext ctx) {
    if (oauth == null) {
      redirect(ctx, path + "/sign-in");
      return;
    }
    oauth.callback(ctx).onSuccess(caller -> {
      // a page of this site moves on, not the issuer's redirect: a SameSite=Strict cookie is sent only then
      Html h = new Html().el("p", "Signed in as " + caller.name() + ".", "class", "lead")
          .open("p").el("a", "Continue to the approvals", "href", path + "/approvals", "id", "continue").close("p");
      String page = layout.page(null, "Signed in", "signed-in", config.defaultDatabase().name(), false, h, "")
          .replace("<head>", "<head><meta http-equiv=\"refresh\" content=\"0;url=" + Html.escape(path + "/approvals") + "\">");
      send(ctx, 200, page);
    }).onFailure(err -> fail(ctx, null, err));
  }

  private void signOut(RoutingContext ctx) {
    sameOrigin(ctx).compose(v -> signIns.current(ctx))
        .compose(person -> forms.take(person, ctx.request().getFormAttribute(Forms.FIELD), "sign-out", person.sid())
            .compose(nonce -> signIns.signOut(ctx, person)))
        .onSuccess(v -> send(ctx, 200, layout.page(null, "Signed out", "signed-out", config.defaultDatabase().name(), false,
            new Html().el("p", "You are signed out, on every node.", "class", "lead").open("p").el("a", "Sign in again", "href",
                path + "/sign-in").close("p"), "")))
        .onFailure(err -> fail(ctx, null, err));
  }

  private static void redirect(RoutingContext ctx, String to) {
    ctx.response().setStatusCode(303).putHeader(HttpHeaders.LOCATION, to).end();
  }

  private static void send(RoutingContext ctx, int status, String html) {
    if (!ctx.response().ended()) {
      ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "text/html; charset=utf-8").end(html);
    }
  }

  private void fail(RoutingContext ctx, Req r, Throwable err) {
    Refusal refusal;
    if (err instanceof Refusal given) {
      refusal = given;
    } else if (err instanceof ToolException te) {
      refusal = new Refusal(te.code() == ErrorCode.NOT_FOUND ? 404 : te.code().retriable() ? 503 : 409, te.code(), "Not done", te.getMessage());
    } else {
      LOG.warn("console request {} {} failed: {}", ctx.request().method(), ctx.request().path(), err.toString());
      refusal = new Refusal(500, ErrorCode.INTERNAL, "Failed", "The console failed while answering: " + err.getMessage() + ". "
          + ErrorCode.INTERNAL.hint());
    }
    Person person = r == null || refusal.status == 401 ? null : r.person();
    String database = r == null ? config.defaultDatabase().name() : r.database();
    send(ctx, refusal.status, layout.refusal(person, refusal, database, r != null && r.administrator(),
        person == null ? "" : signOutToken(person)));
  }
}
