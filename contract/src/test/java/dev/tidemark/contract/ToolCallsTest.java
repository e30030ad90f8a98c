package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ToolCallsTest {

  private Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static ToolRequest request() {
    return new ToolRequest("r-1", "main", "events_status", new JsonObject().put("consumer", "c"),
        new Caller("c-1", "dev", "tidemark_reader", Access.READ_ONLY, List.of("main")));
  }

  @Test
  void aToolRequestGoesAsJsonWithTheToolCallActionAndItsReplyComesBack() throws Exception {
    AtomicReference<String> action = new AtomicReference<>();
    vertx.eventBus().<JsonObject>consumer("tidemark.test.v1", msg -> {
      action.set(msg.headers().get(Addresses.ACTION_HEADER));
      ToolRequest got = ToolRequest.fromJson(msg.body());
      msg.reply(ToolReply.ok("asked " + got.tool(), new JsonObject().put("consumer", got.arguments().getString("consumer"))).toJson());
    });
    ToolReply reply = ToolCalls.ask(vertx, "tidemark.test.v1", request(), 5_000)
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(Actions.TOOL_CALL, action.get());
    assertEquals("c", reply.structured().getString("consumer"));
  }

  @Test
  void theBusFailureFailsTheAskAsItCame() {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> ToolCalls.ask(vertx, "tidemark.nobody.v1", request(), 5_000).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
    ReplyException re = assertInstanceOf(ReplyException.class, e.getCause());
    assertEquals(ReplyFailure.NO_HANDLERS, re.failureType());
  }

  @Test
  void theOptionsCarryTheActionAndTheSendTimeout() {
    var options = ToolCalls.options(1234);
    assertEquals(Actions.TOOL_CALL, options.getHeaders().get(Addresses.ACTION_HEADER));
    assertEquals(1234, options.getSendTimeout());
    assertEquals(1, options.getHeaders().size(), "only the action header");
  }
}
