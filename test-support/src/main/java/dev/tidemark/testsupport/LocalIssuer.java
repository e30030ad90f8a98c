package dev.tidemark.testsupport;

import dev.tidemark.devstack.FreePorts;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An OAuth 2.1 authorization server on 127.0.0.1 as far as a resource server sees one: RFC 8414 metadata naming a JWKS,
 * the JWKS with the RSA keys it signs with, and access tokens (RS256 JWTs) it mints for a test. A key added with
 * {@link #publish} is served from then on, as a rotation at a real issuer would be.
 *
 * <p>It also signs people in as a browser meets an issuer: the authorization code flow with PKCE
 * (S256 only), {@code /authorize} answering at once for the person {@link #signInAs} names (as an
 * issuer whose user is already signed in and consented), and {@code /token} exchanging each code
 * once, for the client, redirect URI and code verifier it was issued to, for an access token whose
 * audience is the {@code resource} asked for.
 */
public final class LocalIssuer implements AutoCloseable {

  private final Vertx vertx = Vertx.vertx();
  private final AtomicInteger jwksFetches = new AtomicInteger();
  private final List<JsonObject> published = new ArrayList<>();
  private final Map<String, KeyPair> keys = new ConcurrentHashMap<>();
  private final HttpServer server;
  private final String url;
  private final Map<String, JsonObject> codes = new ConcurrentHashMap<>();
  private final AtomicInteger exchanges = new AtomicInteger();
  private volatile JsonObject person;

  private LocalIssuer(int port) {
    this.url = "http://127.0.0.1:" + port;
    try {
      server = vertx.createHttpServer().requestHandler(req -> {
        if (req.path().equals("/.well-known/oauth-authorization-server")) {
          req.response().putHeader("Content-Type", "application/json").end(new JsonObject().put("issuer", url)
              .put("jwks_uri", url + "/jwks").put("authorization_endpoint", url + "/authorize").put("token_endpoint", url + "/token")
              .put("code_challenge_methods_supported", new JsonArray().add("S256")).encode());
        } else if (req.path().equals("/authorize")) {
          authorize(req);
        } else if (req.path().equals("/token") && req.method() == io.vertx.core.http.HttpMethod.POST) {
          req.setExpectMultipart(true);
          req.endHandler(v -> exchange(req));
        } else if (req.path().equals("/jwks")) {
          jwksFetches.incrementAndGet();
          JsonArray served;
          synchronized (published) {
            served = new JsonArray(new ArrayList<>(published));
          }
          req.response().putHeader("Content-Type", "application/json").end(new JsonObject().put("keys", served).encode());
        } else {
          req.response().setStatusCode(404).end();
        }
      }).listen(port, "127.0.0.1").toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      vertx.close();
      throw new IllegalStateException("the local issuer did not start", e);
    }
  }

  /** The person {@code /authorize} signs in from now on: their subject, PostgreSQL role and granted scopes. */
  public void signInAs(String subject, String role, String scope) {
    person = new JsonObject().put("sub", subject).put("role", role).put("scope", scope);
  }

  /** Codes exchanged for access tokens, each with its verifier checked. */
  public int exchanges() {
    return exchanges.get();
  }

  private void authorize(io.vertx.core.http.HttpServerRequest req) {
    String redirect = req.getParam("redirect_uri");
    JsonObject who = person;
    if (redirect == null || who == null || !"code".equals(req.getParam("response_type")) || !"S256".equals(req.getParam("code_challenge_method"))
        || req.getParam("code_challenge") == null || req.getParam("client_id") == null) {
      req.response().setStatusCode(400).end("invalid_request");
      return;
    }
    String code = java.util.UUID.randomUUID().toString();
    codes.put(code, who.copy().put("client_id", req.getParam("client_id")).put("redirect_uri", redirect)
        .put("challenge", req.getParam("code_challenge")).put("resource", req.getParam("resource")));
    String state = req.getParam("state");
    req.response().setStatusCode(302).putHeader("Location", redirect + (redirect.contains("?") ? "&" : "?") + "code=" + code
        + (state == null ? "" : "&state=" + java.net.URLEncoder.encode(state, StandardCharsets.UTF_8))).end();
  }

  private void exchange(io.vertx.core.http.HttpServerRequest req) {
    io.vertx.core.MultiMap form = req.formAttributes();
    JsonObject issued = form.get("code") == null ? null : codes.remove(form.get("code"));
    String verifier = form.get("code_verifier");
    boolean ok = issued != null && "authorization_code".equals(form.get("grant_type")) && verifier != null
        && issued.getString("client_id").equals(form.get("client_id")) && issued.getString("redirect_uri").equals(form.get("redirect_uri"))
        && issued.getString("challenge").equals(s256(verifier));
    if (!ok) {
      req.response().setStatusCode(400).putHeader("Content-Type", "application/json").end(new JsonObject().put("error", "invalid_grant").encode());
      return;
    }
    exchanges.incrementAndGet();
    String kid;
    synchronized (published) {
      kid = published.get(0).getString("kid");
    }
    String audience = form.get("resource") != null ? form.get("resource") : issued.getString("resource");
    String token = token(kid, claims(issued.getString("sub"), audience, issued.getString("role"), issued.getString("scope")));
    req.response().putHeader("Content-Type", "application/json").end(new JsonObject().put("access_token", token)
        .put("token_type", "Bearer").put("expires_in", 300).encode());
  }

  private static String s256(String verifier) {
    try {
      return b64(java.security.MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An issuer on a free port that signs with the key {@code kid}. */
  public static LocalIssuer start(String kid) {
    LocalIssuer issuer = new LocalIssuer(FreePorts.allocate());
    issuer.publish(kid);
    return issuer;
  }

  /** The issuer identifier, which is also where its metadata is. */
  public String url() {
    return url;
  }

  /** How often the JWKS was fetched. */
  public int jwksFetches() {
    return jwksFetches.get();
  }

  /** The public key {@code kid} as the JWKS serves it. */
  public JsonObject jwk(String kid) {
    synchronized (published) {
      return published.stream().filter(k -> kid.equals(k.getString("kid"))).findFirst().orElseThrow().copy();
    }
  }

  /** Makes a new RSA key {@code kid} and serves it in the JWKS. */
  public void publish(String kid) {
    try {
      KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
      gen.initialize(2048);
      KeyPair pair = gen.generateKeyPair();
      keys.put(kid, pair);
      RSAPublicKey pub = (RSAPublicKey) pair.getPublic();
      synchronized (published) {
        published.add(new JsonObject().put("kty", "RSA").put("kid", kid).put("use", "sig").put("alg", "RS256")
            .put("n", b64(unsigned(pub.getModulus()))).put("e", b64(unsigned(pub.getPublicExponent()))));
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Claims of a token of this issuer for {@code audience}, valid for five minutes, naming a PostgreSQL role and scopes. */
  public JsonObject claims(String subject, String audience, String role, String scope) {
    long now = System.currentTimeMillis() / 1000;
    return new JsonObject().put("iss", url).put("sub", subject).put("aud", audience).put("iat", now).put("exp", now + 300)
        .put("pg_role", role).put("scope", scope);
  }

  /** {@code claims} signed with the key {@code kid} as an RS256 JWT. */
  public String token(String kid, JsonObject claims) {
    String input = b64(new JsonObject().put("alg", "RS256").put("typ", "JWT").put("kid", kid)) + "." + b64(claims);
    try {
      Signature rsa = Signature.getInstance("SHA256withRSA");
      rsa.initSign(keys.get(kid).getPrivate());
      rsa.update(input.getBytes(StandardCharsets.US_ASCII));
      return input + "." + b64(rsa.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  public static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  public static String b64(JsonObject json) {
    return b64(json.encode().getBytes(StandardCharsets.UTF_8));
  }

  private static byte[] unsigned(BigInteger i) {
    byte[] b = i.toByteArray();
    return b[0] == 0 ? java.util.Arrays.copyOfRange(b, 1, b.length) : b;
  }

  @Override
  public void close() {
    try {
      // closing Vert.x closes the server; chained after the server's close, the end of Vert.x's close would be handed to the
      // server's event loop, which that close has just stopped, and this wait would run to its timeout
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      // a test's issuer that closes slowly holds nothing the next test needs
    }
  }
}
