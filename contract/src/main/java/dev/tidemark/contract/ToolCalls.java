package dev.tidemark.contract;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;

/**
 * How a {@link ToolRequest} travels on the event bus, declared once for every sender: to a role's
 * address ({@link Addresses}), with the {@link Actions#TOOL_CALL} action and an explicit send
 * timeout, and answered by a {@link ToolReply} in either of {@link LocalDelivery}'s forms. The
 * gateway's client builds on it and adds what a call from an agent needs (the local service first,
 * a budget across tries, the calls of a member that left); a role that asks another role a
 * question of its own ({@link Actions#LEASE_HELD}, an acknowledgement on the node that holds a
 * lease) sends through {@link #ask}.
 */
public final class ToolCalls {

  private ToolCalls() {}

  /** The options of a tool request, answered within {@code sendTimeoutMs} or failed by the bus. */
  public static DeliveryOptions options(long sendTimeoutMs) {
    return new DeliveryOptions().addHeader(Addresses.ACTION_HEADER, Actions.TOOL_CALL).setSendTimeout(sendTimeoutMs);
  }

  /**
   * Sends {@code request} to the role at {@code address}, as JSON, and hands back its reply; the
   * event bus's failure (no handler, a timeout) fails the future as it came.
   */
  public static Future<ToolReply> ask(Vertx vertx, String address, ToolRequest request, long timeoutMs) {
    return vertx.eventBus().<Object>request(address, request.toJson(), options(timeoutMs)).map(msg -> LocalDelivery.reply(msg.body()));
  }
}
