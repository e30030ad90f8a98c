package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
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

class LocalDeliveryTest {

  private Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    LocalDelivery.register(vertx);
    LocalDelivery.register(vertx);  // a second role of the node registers it again
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static ToolRequest request() {
    return new ToolRequest("r-1", "main", "get_row", new JsonObject().put("table", "customers").put("key", 1),
        new Caller("c-1", "dev", "tidemark_reader", Access.READ_ONLY, List.of("main")));
  }

  @Test
  void aRequestToThisJvmAndItsReplyAreHandedOverAsTheObjectsThemselves() throws Exception {
    ToolRequest sent = request();
    ToolReply answered = ToolReply.ok("get_row: 1 row", new JsonObject().put("row", new JsonObject().put("id", 1)));
    AtomicReference<Object> received = new AtomicReference<>();
    vertx.eventBus().<Object>consumer("svc", msg -> {
      received.set(msg.body());
      msg.reply(answered, LocalDelivery.reply());
    });
    Message<Object> reply = vertx.eventBus().<Object>request("svc", sent, LocalDelivery.localOnly(new DeliveryOptions()))
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertSame(sent, received.get(), "the service got the very request, not a copy");
    assertSame(sent, LocalDelivery.request(received.get()));
    assertSame(answered, LocalDelivery.reply(reply.body()), "the gateway got the very reply");
  }

  @Test
  void withNoServiceInThisJvmTheSendFailsAtOnceSoThatTheSenderGoesToTheCluster() {
    ExecutionException e = assertThrows(ExecutionException.class, () -> vertx.eventBus()
        .request("nobody-here", request(), LocalDelivery.localOnly(new DeliveryOptions().setSendTimeout(5_000)))
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS, e.getCause().toString());
  }

  @Test
  void theJsonFormsFromAnotherNodeReadTheSame() {
    ToolRequest sent = request();
    ToolRequest read = LocalDelivery.request(sent.toJson());
    assertEquals(sent.requestId(), read.requestId());
    assertEquals(sent.arguments(), read.arguments());
    assertEquals(sent.caller(), read.caller());
    ToolReply reply = ToolReply.ok("s", new JsonObject().put("a", 1));
    assertEquals(reply.structured(), LocalDelivery.reply(reply.toJson()).structured());
  }
}
