package dev.tidemark.auth.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.AuthenticationException;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Caller;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How the issuer's metadata and keys are found and what happens when they cannot be: against a
 * local authorization server on loopback, whose answers each test sets.
 */
class IssuerKeysIT {

  private final Vertx vertx = Vertx.vertx();
  private final AtomicReference<JsonObject> metadata = new AtomicReference<>();
  /** Served at /openid/.well-known/openid-configuration only; the RFC 8414 URL answers 404 when metadata is null. */
  private final AtomicReference<JsonObject> oidc = new AtomicReference<>();
  private final AtomicReference<JsonObject> jwks = new AtomicReference<>();
  private final AtomicInteger jwksFetches = new AtomicInteger();
  private HttpServer server;
  private String origin;
  private KeyPair pair;

  @BeforeEach
  void start() throws Exception {
    server = await(vertx.createHttpServer().requestHandler(req -> {
      if (req.path().equals("/jwks")) {
        jwksFetches.incrementAndGet();
      }
      JsonObject body = req.path().equals("/.well-known/oauth-authorization-server") ? metadata.get()
          : req.path().equals("/openid/.well-known/openid-configuration") ? oidc.get()
          : req.path().equals("/jwks") ? jwks.get() : null;
      if (body == null) {
        req.response().setStatusCode(req.path().equals("/jwks") ? 500 : 404).end();
      } else {
        req.response().putHeader("Content-Type", "application/json").end(body.encode());
      }
    }).listen(0, "127.0.0.1"));
    origin = "http://127.0.0.1:" + server.actualPort();
    KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
    gen.initialize(2048);
    pair = gen.generateKeyPair();
  }

  @AfterEach
  void stop() throws Exception {
    await(vertx.close());
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static Throwable failure(Future<?> f) {
    try {
      f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      throw new AssertionError("expected a failure");
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  private JsonObject rsaKey(String kid) {
    RSAPublicKey pub = (RSAPublicKey) pair.getPublic();
    return new JsonObject().put("kty", "RSA").put("kid", kid).put("n", b64(unsigned(pub.getModulus())))
        .put("e", b64(unsigned(pub.getPublicExponent()))); // no "alg", as Entra publishes them
  }

  private static byte[] unsigned(BigInteger i) {
    byte[] b = i.toByteArray();
    return b[0] == 0 ? Arrays.copyOfRange(b, 1, b.length) : b;
  }

  private String token(String issuer, String kid) throws Exception {
    long now = System.currentTimeMillis() / 1000;
    String input = b64(new JsonObject().put("alg", "RS256").put("kid", kid).encode().getBytes(StandardCharsets.UTF_8)) + "."
        + b64(new JsonObject().put("iss", issuer).put("aud", "https://t.example/mcp").put("sub", "s").put("exp", now + 60)
            .put("pg_role", "reader").put("scope", "tidemark:read").encode().getBytes(StandardCharsets.UTF_8));
    Signature rsa = Signature.getInstance("SHA256withRSA");
    rsa.initSign(pair.getPrivate());
    rsa.update(input.getBytes(StandardCharsets.US_ASCII));
    return "Bearer " + input + "." + b64(rsa.sign());
  }

  private JwtAuthenticator authenticator(String issuer) {
    Authenticator tokens = authorization -> Future.failedFuture(new AuthenticationException("not a tmk_ token"));
    return new JwtAuthenticator(vertx, new OAuthConfig(issuer, "", "", "pg_role", List.of("reader"), 30, 600, 3600), tokens);
  }

  @Test
  void aKeyWithoutAlgVerifiesAsRs256AndAFailedRefetchIsACheckThatCouldNotBeMade() throws Exception {
    metadata.set(new JsonObject().put("issuer", origin).put("jwks_uri", origin + "/jwks"));
    jwks.set(new JsonObject().put("keys", new JsonArray().add(rsaKey("k1"))));
    JwtAuthenticator auth = authenticator(origin);
    await(auth.start(r -> {}));
    Caller caller = await(auth.authenticate(token(origin, "k1"), "https://t.example/mcp"));
    assertEquals("reader", caller.pgRole());
    jwks.set(null); // the issuer's key endpoint fails
    Throwable err = failure(auth.authenticate(token(origin, "k2"), "https://t.example/mcp"));
    assertFalse(err instanceof AuthenticationException, String.valueOf(err)); // 503, not 401: the token may be fine
    assertEquals("reader", await(auth.authenticate(token(origin, "k1"), "https://t.example/mcp")).pgRole()); // the keys held still verify
    await(auth.stop());
  }

  @Test
  void openIdConfigurationUnderTheIssuersPathIsTheFallback() throws Exception {
    String issuer = origin + "/openid";
    oidc.set(new JsonObject().put("issuer", issuer).put("jwks_uri", origin + "/jwks"));
    jwks.set(new JsonObject().put("keys", new JsonArray().add(rsaKey("k1"))));
    JwtAuthenticator auth = authenticator(issuer);
    await(auth.start(r -> {}));
    assertEquals("oauth:s", await(auth.authenticate(token(issuer, "k1"), "https://t.example/mcp")).id());
  }

  @Test
  void aKeySetWithoutPublicSigningKeysStopsTheStart() {
    metadata.set(new JsonObject().put("issuer", origin).put("jwks_uri", origin + "/jwks"));
    jwks.set(new JsonObject().put("keys", new JsonArray()
        .add(new JsonObject().put("kty", "oct").put("kid", "h").put("k", b64("secret-secret-secret-secret-1234".getBytes(StandardCharsets.UTF_8))))
        .add(rsaKey("enc").put("use", "enc"))));
    String message = failure(authenticator(origin).start(r -> {})).getMessage();
    assertTrue(message.startsWith("auth.oauth.issuer " + origin) && message.contains("holds no public signing key"), message);
  }

  @Test
  void metadataNamingAnotherIssuerIsNotUsed() {
    metadata.set(new JsonObject().put("issuer", "https://evil.example").put("jwks_uri", origin + "/jwks"));
    jwks.set(new JsonObject().put("keys", new JsonArray().add(rsaKey("k1"))));
    String message = failure(authenticator(origin).start(r -> {})).getMessage();
    assertTrue(message.contains("names issuer https://evil.example") && message.contains("auth.oauth.jwks-url"), message);
  }
  @Test
  void requestsWithARotatedKeyOnManyThreadsShareOneFetchAndAnotherUnknownKeyWaitsForTheInterval() throws Exception {
    metadata.set(new JsonObject().put("issuer", origin).put("jwks_uri", origin + "/jwks"));
    jwks.set(new JsonObject().put("keys", new JsonArray().add(rsaKey("k1"))));
    JwtAuthenticator auth = authenticator(origin);
    await(auth.start(r -> {}));
    assertEquals(1, jwksFetches.get());
    // the issuer rotates to k2: every request that names it at once waits for the same fetch
    jwks.set(new JsonObject().put("keys", new JsonArray().add(rsaKey("k1")).add(rsaKey("k2"))));
    String rotated = token(origin, "k2");
    int threads = 8;
    CyclicBarrier together = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Caller>> calls = new CopyOnWriteArrayList<>();
    try {
      for (java.util.concurrent.Future<Object> started : pool.invokeAll(Collections.nCopies(threads, () -> {
        together.await(10, TimeUnit.SECONDS);
        for (int i = 0; i < 20; i++) {
          calls.add(auth.authenticate(rotated, "https://t.example/mcp"));
        }
        return null;
      }))) {
        started.get(10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    for (Future<Caller> call : calls) {
      assertEquals("reader", await(call).pgRole());
    }
    assertEquals(2, jwksFetches.get(), "one fetch for every request that named the new key");
    // another unknown key within auth.oauth.jwks-refresh-seconds: refused without asking the issuer again
    assertTrue(failure(auth.authenticate(token(origin, "k3"), "https://t.example/mcp")) instanceof AuthenticationException);
    assertEquals(2, jwksFetches.get());
    await(auth.stop());
  }
}
