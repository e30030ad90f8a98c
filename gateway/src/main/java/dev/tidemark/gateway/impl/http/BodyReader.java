package dev.tidemark.gateway.impl.http;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;

/**
 * Reads a paused request's body by hand, with a byte cap and a deadline, so that an oversized or
 * slow upload costs the server nothing beyond the cap: a declared length over the cap is refused
 * before a byte is read, and a body that outgrows it is refused as soon as it does.
 */
public final class BodyReader {

  /** The client went away mid-body: there is nobody to answer. */
  public static final class ClientGone extends RuntimeException {
    ClientGone(Throwable cause) {
      super("the client went away mid-body", cause, false, false);
    }
  }

  private final Vertx vertx;
  private final long maxBytes;
  private final long deadlineMs;

  public BodyReader(Vertx vertx, long maxBytes, long deadlineMs) {
    this.vertx = vertx;
    this.maxBytes = maxBytes;
    this.deadlineMs = deadlineMs;
  }

  /** The body; fails with a {@link Refusal} (413, 408) or {@link ClientGone}. */
  public Future<Buffer> read(HttpServerRequest request) {
    if (declaredTooLarge(request.getHeader(HttpHeaders.CONTENT_LENGTH), maxBytes)) {
      return tooLarge().future();
    }
    Promise<Buffer> promise = Promise.promise();
    Buffer body = Buffer.buffer();
    long timer = vertx.setTimer(deadlineMs, t -> promise.tryFail(Refusal.http(408, "The body did not arrive within " + deadlineMs + " ms.")));
    request.handler(chunk -> {
      if (promise.future().isComplete()) {
        return;
      }
      if (body.length() + chunk.length() > maxBytes) {
        promise.tryFail(tooLarge());
      } else {
        body.appendBuffer(chunk);
      }
    });
    request.exceptionHandler(err -> promise.tryFail(new ClientGone(err)));
    request.endHandler(v -> promise.tryComplete(body));
    request.resume();
    return promise.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  private Refusal tooLarge() {
    return Refusal.http(413, "The body is larger than " + maxBytes + " bytes.");
  }

  /** A Content-Length over the cap; one that is not a number is left to the byte count. */
  static boolean declaredTooLarge(String contentLength, long maxBytes) {
    if (contentLength == null) {
      return false;
    }
    try {
      return Long.parseLong(contentLength.trim()) > maxBytes;
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
