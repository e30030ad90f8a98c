package dev.tidemark.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Many requests share one event loop, each on a duplicate of its context: a request's ids must
 * never reach another's lines, however their steps interleave on the loop.
 */
class LogContextTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void requestsInterleavedOnOneEventLoopEachSeeOnlyTheirOwnIds() throws Exception {
    ContextInternal loop = (ContextInternal) vertx.getOrCreateContext();
    int requests = 200;
    List<io.vertx.core.Future<Map<String, String>>> seen = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      String id = "req-" + i;
      ContextInternal request = loop.duplicate();
      Promise<Map<String, String>> promise = Promise.promise();
      // the put and the read are two steps of the request, with every other request's steps in between
      request.runOnContext(v -> LogContext.put(LogContext.REQUEST_ID, id));
      request.runOnContext(v -> request.runOnContext(w -> promise.complete(Map.copyOf(LogContext.current()))));
      seen.add(promise.future());
    }
    for (int i = 0; i < requests; i++) {
      Map<String, String> ids = seen.get(i).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertEquals(Map.of(LogContext.REQUEST_ID, "req-" + i), ids);
    }
    // the loop's own context is every request's: nothing is put there
    Promise<Map<String, String>> onLoop = Promise.promise();
    loop.runOnContext(v -> {
      LogContext.put(LogContext.CALLER_ID, "nobody");
      onLoop.complete(LogContext.current());
    });
    assertTrue(onLoop.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).isEmpty());
  }

  @Test
  void offARequestNothingIsPutOnAContextThatIsNotOneRequests() {
    // a CLI command or a Kafka thread: the ids of its lines are the MDC's, never a request's
    LogContext.put(LogContext.SESSION_ID, "not a request's");
    assertTrue(LogContext.current().isEmpty(), LogContext.current().toString());
  }
}
