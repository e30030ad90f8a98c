package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;

/**
 * What a call that ran out of time was waiting for, written in the {@code waited_for} detail of
 * its UNAVAILABLE or TIMEOUT error: a caller backs off differently for a full pool than for a slow
 * statement, and a gateway may send a call that never got a connection to another node.
 */
public enum WaitedFor {
  /** No connection of the pool became free in time: nothing ran. */
  CONNECTION("connection"),
  /** The statement had a connection and ran past its time limit. */
  STATEMENT("statement"),
  /** No service answered the gateway's request in time. */
  SERVICE("service"),
  /** Too many of the caller's calls were running on the gateway, and this one found no place (or no turn) in its queue: nothing ran. */
  QUEUE("queue");

  /** The detail's key in an error object. */
  public static final String KEY = "waited_for";

  private final String wire;

  WaitedFor(String wire) {
    this.wire = wire;
  }

  /** The detail's value on the wire. */
  public String wire() {
    return wire;
  }

  /** A details object holding only this. */
  public JsonObject details() {
    return new JsonObject().put(KEY, wire);
  }

  /** Whether the error object {@code error} says it waited for this. */
  public boolean in(JsonObject error) {
    return error != null && wire.equals(error.getString(KEY));
  }
}
