package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;

import dev.tidemark.contract.Addresses;
import dev.tidemark.keys.Signer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code requestState} of a 2026-07-28 {@code input_required} result: the answers a call has
 * used in earlier rounds, signed with a secret all gateways of the cluster share, so that the
 * retry may reach any of them and no client can alter it. A state belongs to one caller and one
 * request (method, name or URI, and arguments), and expires; anything else is refused with -32602
 * before the request runs.
 */
public final class RequestStates {

  /** The cluster map that holds the shared secret, created by the first gateway that starts. */
  /** How long a client may take to answer an input request (a user deciding included). */
  static final long TTL_MS = 30 * 60 * 1000L;
  static final String INVALID = "params.requestState is not one this server issued for this request: it was altered, has"
      + " expired (after " + TTL_MS / 60_000 + " minutes), or belongs to another request or caller. Send the request again"
      + " without requestState and inputResponses.";

  private final Vertx vertx;
  private volatile Signer signer;

  public RequestStates(Vertx vertx) {
    this.vertx = vertx;
  }

  /** With a fixed signer, for tests. */
  RequestStates(Signer signer) {
    this.vertx = null;
    this.signer = signer;
  }

  public Future<Void> start() {
    byte[] fresh = new byte[32];
    new SecureRandom().nextBytes(fresh);
    return vertx.sharedData().<String, String>getAsyncMap(Addresses.REQUEST_STATE_KEYS_MAP)
        .compose(map -> map.putIfAbsent("secret", Base64.getEncoder().encodeToString(fresh)))
        .map(existing -> {
          signer = new Signer(existing == null ? fresh : Base64.getDecoder().decode(existing));
          return null;
        });
  }

  /** A state for {@code call}'s next round that carries {@code answers}. */
  String issue(Call call, JsonObject answers) {
    return signer.sign(new JsonObject().put("r", requestHash(call)).put("c", call.caller().id())
        .put("e", System.currentTimeMillis() + TTL_MS).put("a", answers));
  }

  /** Why the request's state is refused, or null when it has none or it holds. */
  public RpcFailure fault(Call call) {
    return call.params().getValue("requestState") instanceof String s && carried(call, s) == null
        ? new RpcFailure(JsonRpc.INVALID_PARAMS, INVALID)
        : null;
  }

  /** The answers of earlier rounds, then this request's {@code inputResponses} over them. */
  JsonObject answers(Call call) {
    JsonObject answers = new JsonObject();
    if (call.params().getValue("requestState") instanceof String s) {
      JsonObject earlier = carried(call, s);
      if (earlier != null) {
        answers.mergeIn(earlier);
      }
    }
    if (call.inputResponses() != null) {
      answers.mergeIn(call.inputResponses());
    }
    return answers;
  }

  private JsonObject carried(Call call, String state) {
    return signer.open(state)
        .filter(p -> requestHash(call).equals(p.getValue("r")) && call.caller().id().equals(p.getValue("c"))
            && p.getValue("e") instanceof Number e && e.longValue() > System.currentTimeMillis())
        .map(p -> p.getValue("a") instanceof JsonObject a ? a : new JsonObject())
        .orElse(null);
  }

  /** What a state is bound to: the method, what it names, and the arguments, in a canonical form. */
  private static String requestHash(Call call) {
    JsonObject p = call.params();
    JsonArray what = new JsonArray().add(call.method()).add(p.getValue("name")).add(p.getValue("uri"))
        .add(canonical(p.getValue("arguments")));
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(what.encode().getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Objects with their keys sorted, at every depth: the same arguments in another order hash the same. */
  static Object canonical(Object value) {
    if (value instanceof JsonObject o) {
      Map<String, Object> sorted = new TreeMap<>();
      o.forEach(e -> sorted.put(e.getKey(), canonical(e.getValue())));
      return new JsonObject(new java.util.LinkedHashMap<>(sorted));
    }
    if (value instanceof JsonArray a) {
      JsonArray out = new JsonArray();
      a.forEach(v -> out.add(canonical(v)));
      return out;
    }
    return value;
  }
}
