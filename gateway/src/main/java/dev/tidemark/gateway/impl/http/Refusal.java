package dev.tidemark.gateway.impl.http;

import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request refused before it became a call, as a value: the status, headers and body to answer
 * with. Every step fails its future with one and {@link AnswerWriter#refuse} writes it, so no step
 * writes a response of its own and none leaves a request waiting on a future that never completes.
 */
public final class Refusal extends RuntimeException {

  private final Answer answer;

  private Refusal(Answer answer) {
    super(answer.status() + " " + answer.body(), null, false, false);
    this.answer = answer;
  }

  /** A refusal of the HTTP request itself: JSON-RPC -32600 with a null id, since the message was not read. */
  public static Refusal http(int status, String message) {
    return rpc(status, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, message));
  }

  /** A refusal with a JSON-RPC error body the caller built (its id, code and data). */
  public static Refusal rpc(int status, JsonObject body) {
    return new Refusal(new Answer(status, Map.of(), body));
  }

  /** The same refusal with one more header. */
  public Refusal with(String header, String value) {
    Map<String, String> headers = new LinkedHashMap<>(answer.headers());
    headers.put(header, value);
    return new Refusal(new Answer(answer.status(), headers, answer.body()));
  }

  public <T> Future<T> future() {
    return Future.failedFuture(this);
  }

  public Answer answer() {
    return answer;
  }
}
