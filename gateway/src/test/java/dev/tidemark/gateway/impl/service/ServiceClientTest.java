package dev.tidemark.gateway.impl.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Access;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.LocalDelivery;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.WaitedFor;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ServiceClientTest {

  @Test
  void aLongPollingCallIsGivenItsWaitOnTopOfTheSendTimeoutAndNoMore() {
    assertEquals(0, ServiceClient.waitMs(new JsonObject()));
    assertEquals(0, ServiceClient.waitMs(new JsonObject().put("wait_ms", "soon")));
    assertEquals(0, ServiceClient.waitMs(new JsonObject().put("wait_ms", -5)));
    assertEquals(12_000, ServiceClient.waitMs(new JsonObject().put("wait_ms", 12_000)));
    assertEquals(30_000, ServiceClient.waitMs(new JsonObject().put("wait_ms", 10_000_000)));
  }

  @Test
  void aNodeAloneAnswersAFullPoolsRefusalAtOnceInsteadOfAskingItsOwnPoolAgain() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      ToolDescriptor tool = ToolCatalog.find("get_row").orElseThrow();
      AtomicInteger asked = new AtomicInteger();
      vertx.eventBus().consumer(Addresses.forService(tool.service(), "main"), msg -> {
        asked.incrementAndGet();
        ToolReply refused = ToolReply.failed(new ToolException(ErrorCode.UNAVAILABLE, "Every connection stayed busy.",
            WaitedFor.CONNECTION.details()));
        // as a service does: the object to a request that came as one, JSON to one from the cluster
        vertx.setTimer(200, t -> msg.reply(msg.body() instanceof ToolRequest ? refused : refused.toJson(),
            msg.body() instanceof ToolRequest ? LocalDelivery.reply() : new io.vertx.core.eventbus.DeliveryOptions()));
      });
      ServiceClient client = new ServiceClient(vertx, 10_000, null);
      ToolRequest request = new ToolRequest("r-1", "main", "get_row", new JsonObject().put("table", "customers").put("key", 1),
          new Caller("c-1", "dev", "tidemark_reader", Access.READ_ONLY, List.of("main")));
      ToolReply reply = client.send(tool, request).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertEquals(ErrorCode.UNAVAILABLE.code(), reply.error().getString("code"));
      assertTrue(WaitedFor.CONNECTION.in(reply.error()), reply.error().encode());
      // asked once, not a second time: a clock would fail this on a busy machine, a count does not
      assertEquals(1, asked.get(), "the node's own pool was asked again");
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
