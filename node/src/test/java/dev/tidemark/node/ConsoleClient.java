package dev.tidemark.node;

import dev.tidemark.auth.TokenStore;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.database.Pools;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;

/**
 * A person's browser as far as the console's HTTP goes, without one: a cookie jar, no redirects
 * followed, forms sent with the Origin a browser gives them, and pages read with jsoup. The real
 * browser's test is {@code ConsoleBrowserIT}; this one sends what a browser would not (forged and
 * replayed forms, other origins) and runs against two nodes at once.
 */
final class ConsoleClient {

  record Page(int status, Map<String, List<String>> headers, String body) {
    Document doc() {
      return Jsoup.parse(body);
    }

    /** The error code a refusal page names, or null when the page is no refusal. */
    String refusalCode() {
      Element r = doc().selectFirst("section.refusal");
      return r == null ? null : r.attr("data-code");
    }

    /** The form token of the first form matching {@code css}. */
    String formToken(String css) {
      Element form = doc().selectFirst(css);
      if (form == null) {
        throw new AssertionError("no form " + css + " on the page:\n" + body);
      }
      return form.selectFirst("input[name=form_token]").val();
    }

    String header(String name) {
      return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name)).flatMap(e -> e.getValue().stream())
          .collect(Collectors.joining("\n"));
    }
  }

  private final String base;
  private final CookieManager cookies;
  private final HttpClient http;

  ConsoleClient(String base) {
    this(base, new CookieManager());
  }

  private ConsoleClient(String base, CookieManager cookies) {
    this.base = base;
    this.cookies = cookies;
    this.http = HttpClient.newBuilder().cookieHandler(cookies).followRedirects(HttpClient.Redirect.NEVER)
        .connectTimeout(Duration.ofSeconds(10)).build();
  }

  /** The same person (the same cookies) at another node. */
  ConsoleClient at(String otherBase) {
    return new ConsoleClient(otherBase, cookies);
  }

  static String base(TidemarkNode node) {
    return "http://127.0.0.1:" + node.httpPort();
  }

  Page get(String pathAndQuery) {
    return send(HttpRequest.newBuilder(URI.create(base + pathAndQuery)).GET());
  }

  Page post(String path, Map<String, String> form) {
    return post(path, form, base);
  }

  /** A form POST as a browser sends one from a page of {@code origin}. */
  Page post(String path, Map<String, String> form, String origin) {
    return join(postAsync(path, form, origin));
  }

  CompletableFuture<Page> postAsync(String path, Map<String, String> form, String origin) {
    String body = form.entrySet().stream().map(e -> enc(e.getKey()) + "=" + enc(e.getValue())).collect(Collectors.joining("&"));
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (origin != null) {
      b.header("Origin", origin);
    }
    return http.sendAsync(b.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString())
        .thenApply(r -> new Page(r.statusCode(), r.headers().map(), r.body()));
  }

  private Page send(HttpRequest.Builder b) {
    try {
      HttpResponse<String> r = http.send(b.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
      return new Page(r.statusCode(), r.headers().map(), r.body());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static Page join(CompletableFuture<Page> page) {
    try {
      return page.get(90, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Signs in with {@code token} through the sign-in form, as a person pastes it; the answer (303 when it signed in). */
  Page signIn(String token) {
    Page form = get("/console/sign-in");
    String pre = form.doc().selectFirst("form.sign-in input[name=pre]").val();
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("pre", pre);
    fields.put("token", token);
    return post("/console/sign-in", fields);
  }

  /** The value of the cookie {@code name} this browser holds, or null. */
  String cookie(String name) {
    return cookies.getCookieStore().getCookies().stream().filter(c -> c.getName().equals(name)).map(java.net.HttpCookie::getValue)
        .findFirst().orElse(null);
  }

  /** Puts a cookie back as a browser that kept it would send it (a copy taken earlier). */
  void keep(String name, String value) {
    java.net.HttpCookie c = new java.net.HttpCookie(name, value);
    c.setPath("/console");
    c.setVersion(0);
    cookies.getCookieStore().add(URI.create(base), c);
  }

  /** Drops every cookie: the same browser, signed out without telling the console. */
  void forget() {
    cookies.getCookieStore().removeAll();
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** Tokens of the people and agents a console test needs, made in database {@code db} as {@code tidemark token create} makes them. */
  static void tokens(SharedInfra infra, String db, Map<String, String> tokenByName) {
    tokens(infra, db, tokenByName, "tidemark_writer");
  }

  /** {@link #tokens(SharedInfra, String, Map)} mapping each to {@code role}. */
  static void tokens(SharedInfra infra, String db, Map<String, String> tokenByName, String role) {
    Vertx vertx = Vertx.vertx();
    try {
      Map<ConfigKey, String> v = TestNodes.config(infra, "prepare", 0, "", "query");
      v.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
      Pool pool = Pools.create(vertx, TidemarkConfig.from(v).database());
      TokenStore store = TokenStore.create(pool);
      tokenByName.forEach((name, token) -> TestNodes.await(store.put(name, token, role, Access.READ_WRITE, List.of("*"))
          .toCompletionStage().toCompletableFuture()));
    } finally {
      TestNodes.await(vertx.close().toCompletionStage().toCompletableFuture());
    }
  }
}
