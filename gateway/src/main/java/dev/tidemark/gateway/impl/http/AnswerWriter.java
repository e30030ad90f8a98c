package dev.tidemark.gateway.impl.http;

import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a request that never became a call is answered: refusals, and the few plain
 * answers of the transport itself (202, an initialize result). It also decides what a refusal
 * does to its connection, so that every refusal keeps the same rules.
 */
public final class AnswerWriter {

  private static final Logger LOG = LoggerFactory.getLogger(AnswerWriter.class);
  /** Longest a refused connection is read (and what it sends dropped) before the server closes it. */
  public static final long LINGER_MILLIS = 1000;

  /** What an answer does to its connection. */
  enum Fate { KEEP, ASK_TO_CLOSE, CLOSE }

  private final Vertx vertx;
  private final ConnectionSlots slots;

  public AnswerWriter(Vertx vertx, ConnectionSlots slots) {
    this.vertx = vertx;
    this.slots = slots;
  }

  /**
   * A body never read is not drained: the client is asked to close rather than send what may be a
   * huge upload. A socket that never authenticated, or failed to, is closed by the server after any
   * refusal: the header alone binds only clients that play fair, and such sockets must not pile up.
   */
  static Fate fate(int status, boolean bodyRead, boolean closeAsked, boolean authenticated) {
    if (closeAsked || status >= 400 && !authenticated) {
      return Fate.CLOSE;
    }
    return status >= 400 && !bodyRead ? Fate.ASK_TO_CLOSE : Fate.KEEP;
  }

  /** Answers a failed step: a {@link Refusal} as it says, a client gone mid-body not at all, anything else as a 500. */
  public void refuse(RoutingContext ctx, Throwable err) {
    if (err instanceof Refusal r) {
      write(ctx, r.answer());
    } else if (err instanceof BodyReader.ClientGone) {
      ctx.response().reset(); // nobody to answer
    } else {
      // a bug must cost one request an error, never leave it hanging
      LOG.error("request failed unexpectedly", err);
      write(ctx, Answer.json(500, JsonRpc.error(null, JsonRpc.INTERNAL_ERROR, "Internal error; retry, and report it if it persists.")));
    }
  }

  public void write(RoutingContext ctx, Answer answer) {
    HttpServerResponse response = ctx.response();
    if (response.ended() || response.closed()) {
      return;
    }
    answer.headers().forEach(response::putHeader);
    HttpServerRequest request = ctx.request();
    Fate fate = fate(answer.status(), request.isEnded(), "close".equalsIgnoreCase(response.headers().get(HttpHeaders.CONNECTION)),
        slots.isAuthenticated(request.connection()));
    if (fate != Fate.KEEP) {
      response.putHeader(HttpHeaders.CONNECTION, "close");
    }
    response.setStatusCode(answer.status());
    Future<Void> written = answer.body() == null ? response.end()
        : response.putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(answer.body().encode());
    if (fate == Fate.CLOSE) {
      written.onComplete(ar -> closeCleanly(request));
    }
  }

  /**
   * Closes a connection once what the client already sent is read and dropped, for at most
   * {@link #LINGER_MILLIS}: closing a socket with unread input makes the kernel send a reset,
   * which can destroy the answer before the client reads it.
   */
  private void closeCleanly(HttpServerRequest request) {
    HttpConnection connection = request.connection();
    if (request.isEnded()) {
      connection.close();
      return;
    }
    long timer = vertx.setTimer(LINGER_MILLIS, t -> connection.close());
    Runnable close = () -> {
      vertx.cancelTimer(timer);
      connection.close();
    };
    request.handler(chunk -> {});
    request.exceptionHandler(err -> close.run());
    request.endHandler(v -> close.run());
    request.resume();
  }
}
