package dev.tidemark.node;

import dev.tidemark.testsupport.McpHttpClient;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * An MCP client that retries as docs/reference/errors.md tells a client to: after a transport
 * error, a 5xx (a draining gateway's -32010 included) or a retriable tool error it sends the call
 * again, unchanged, to the next gateway; after a 404 for its session it opens a new one; a commit
 * refused as {@code INVALID_PLAN} or {@code PLAN_CHANGED} is planned again and committed with the
 * same idempotency key. Every attempt and every call is recorded, for the test to measure.
 */
final class RetryingClient implements AutoCloseable {

  /** One attempt: when it started and ended, and why it failed ({@code null} when it succeeded). */
  record Attempt(long startNanos, long endNanos, String tool, String failure) {}

  /** One call, from its first attempt to the answer it was given, and how many times it was sent again. */
  record Call(long startNanos, long endNanos, String tool, int retries) {}

  /** Commit refusals that mean "plan again" rather than "send again". */
  private static final Set<String> REPLAN = Set.of("INVALID_PLAN", "PLAN_CHANGED");
  private static final long BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final List<String> gateways;
  private final String token;
  private final Duration giveUp;
  private final Queue<Attempt> attempts;
  private final Queue<Call> calls;
  private int cursor;
  private McpHttpClient client;

  RetryingClient(List<String> gateways, int first, String token, Duration giveUp, Queue<Attempt> attempts, Queue<Call> calls) {
    this.gateways = gateways;
    this.cursor = first;
    this.token = token;
    this.giveUp = giveUp;
    this.attempts = attempts;
    this.calls = calls;
  }

  /** Inserts {@code row} into {@code table} through insert_rows, plan then commit under {@code key}; the commit's structuredContent. */
  JsonObject insertRow(String table, JsonObject row, String key) {
    JsonObject args = new JsonObject().put("table", table).put("rows", new JsonArray().add(row));
    long deadline = System.nanoTime() + giveUp.toNanos();
    while (true) {
      JsonObject plan = call("insert_rows", args, deadline);
      JsonObject outcome = call("insert_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key), deadline);
      if (outcome != null) {
        return outcome;
      }
    }
  }

  /** Calls {@code tool} until it succeeds; its structuredContent. */
  JsonObject call(String tool, JsonObject args) {
    return call(tool, args, System.nanoTime() + giveUp.toNanos());
  }

  /** The structuredContent of the first success, or null when a commit's plan was refused; fails past {@code deadline} or on a permanent error. */
  private JsonObject call(String tool, JsonObject args, long deadline) {
    long first = System.nanoTime();
    String last = null;
    for (int retries = 0; System.nanoTime() < deadline; retries++) {
      long start = System.nanoTime();
      String url = gateways.get(Math.floorMod(cursor, gateways.size()));
      String failure;
      JsonObject content = null;
      try {
        if (client == null) {
          client = new McpHttpClient(url, token);
          client.initialize();
        }
        McpHttpClient.Reply reply = client.at(url).post(client.request("tools/call",
            new JsonObject().put("name", tool).put("arguments", args)));
        failure = failureOf(reply);
        if (failure == null) {
          content = reply.json().getJsonObject("result").getJsonObject("structuredContent");
        } else if (failure.startsWith("404")) {
          dropSession();
        }
      } catch (RuntimeException | AssertionError e) {
        // refused or cut connection, or a gateway that could not open the session
        boolean opened = client != null && client.sessionId() != null;
        failure = opened ? "connection" : "initialize";
        if (!opened) {
          dropSession();
        }
      }
      attempts.add(new Attempt(start, System.nanoTime(), tool, failure));
      if (failure == null) {
        calls.add(new Call(first, System.nanoTime(), tool, retries));
        cursor++; // every gateway gets traffic, so that a fault of any one shows
        return content;
      }
      if (REPLAN.contains(failure)) {
        calls.add(new Call(first, System.nanoTime(), tool, retries));
        return null;
      }
      if (failure.startsWith("permanent")) {
        throw new AssertionError(tool + " " + args.encode() + " failed for good: " + failure);
      }
      last = failure;
      cursor++;
      LockSupport.parkNanos(BACKOFF_NANOS); // the client's backoff
    }
    throw new AssertionError(tool + " " + args.encode() + " did not succeed within " + giveUp + "; last: " + last);
  }

  /**
   * Null for a success; else the kind of failure: {@code 5xx <json-rpc code>}, {@code 404} (the
   * session is gone), a retriable tool error's code, a plan refusal's code, or {@code permanent ...}.
   */
  private static String failureOf(McpHttpClient.Reply reply) {
    if (reply.status() >= 500) {
      JsonObject error = reply.body().startsWith("{") ? reply.json().getJsonObject("error") : null;
      return reply.status() + (error == null ? "" : " " + error.getInteger("code"));
    }
    if (reply.status() == 404) {
      return "404";
    }
    JsonObject message = reply.status() == 200 ? reply.json() : null;
    JsonObject result = message == null ? null : message.getJsonObject("result");
    if (result == null) {
      return "permanent " + reply.status() + " " + reply.body();
    }
    if (!Boolean.TRUE.equals(result.getBoolean("isError"))) {
      return null;
    }
    JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
    String code = error.getString("code");
    return error.getBoolean("retriable", false) || REPLAN.contains(code) ? code : "permanent " + error.encode();
  }

  private void dropSession() {
    if (client != null) {
      client.close();
      client = null;
    }
  }

  @Override
  public void close() {
    dropSession();
  }
}
