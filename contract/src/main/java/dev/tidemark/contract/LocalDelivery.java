package dev.tidemark.contract;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.json.JsonObject;

/**
 * A {@link ToolRequest} to a service in the same JVM, and its {@link ToolReply}, as the objects
 * themselves. The event bus copies a {@code JsonObject} it delivers locally, and a service would
 * parse the request from it and the gateway the reply, so a call in one JVM paid for two deep
 * copies and two conversions that carried nothing across a process. Such a message is sent local
 * only ({@link DeliveryOptions#setLocalOnly}), so it never needs a wire form; when no service of
 * the address runs in this JVM, the sender sends the JSON form to the cluster, as before, and
 * a node of another version never sees anything but JSON.
 *
 * <p>Both sides treat what they hand over as no longer theirs: a service never changes a reply
 * after sending it, and the gateway never changes a request's arguments after sending them.
 */
public final class LocalDelivery {

  /** The codec's name; a message with it never leaves this JVM. */
  public static final String CODEC = "tidemark.local.v1";

  private LocalDelivery() {}

  /** Registers the codec on {@code vertx}'s event bus once; later calls do nothing. */
  public static void register(Vertx vertx) {
    try {
      vertx.eventBus().registerCodec(new Codec());
    } catch (IllegalStateException alreadyRegistered) {
      // another role of this node registered it first
    }
  }

  /** {@code options} for a message to this JVM's consumers only, carrying the object itself. */
  public static DeliveryOptions localOnly(DeliveryOptions options) {
    return new DeliveryOptions(options).setLocalOnly(true).setCodecName(CODEC);
  }

  /** Options for a reply that carries the {@link ToolReply} itself, to a request that came as an object. */
  public static DeliveryOptions reply() {
    return new DeliveryOptions().setLocalOnly(true).setCodecName(CODEC);
  }

  /** The request a message carries, in either form. */
  public static ToolRequest request(Object body) {
    return body instanceof ToolRequest r ? r : ToolRequest.fromJson((JsonObject) body);
  }

  /** The reply a message carries, in either form. */
  public static ToolReply reply(Object body) {
    return body instanceof ToolReply r ? r : ToolReply.fromJson((JsonObject) body);
  }

  /** Hands the object over as it is; it has no wire form, since it is only ever sent local only. */
  private static final class Codec implements MessageCodec<Object, Object> {

    @Override
    public void encodeToWire(Buffer buffer, Object o) {
      throw new IllegalStateException("a " + CODEC + " message is local only and has no wire form");
    }

    @Override
    public Object decodeFromWire(int pos, Buffer buffer) {
      throw new IllegalStateException("a " + CODEC + " message is local only and has no wire form");
    }

    @Override
    public Object transform(Object o) {
      return o;
    }

    @Override
    public String name() {
      return CODEC;
    }

    @Override
    public byte systemCodecID() {
      return -1;
    }
  }
}
