package dev.tidemark.testsupport;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An SSE response read as it arrives, for tests: each event lands in a queue the test thread
 * waits on with a deadline, so a test waits for the message it expects and never sleeps.
 */
public final class SseStream implements AutoCloseable {

  private final Vertx vertx = Vertx.vertx();
  private final HttpClient client = vertx.createHttpClient();
  private final BlockingQueue<McpHttpClient.SseEvent> events = new LinkedBlockingQueue<>();
  private volatile int status;
  private volatile MultiMap headers;
  private volatile boolean ended;
  private final StringBuffer text = new StringBuffer();
  private HttpClientResponse response;

  private SseStream() {}

  /** The stream an event id names: {@code <stream>-<seq>}. */
  public static String streamOf(String eventId) {
    return eventId.substring(0, eventId.lastIndexOf('-'));
  }

  /** The sequence number within its stream an event id names: {@code <stream>-<seq>}. */
  public static long seqOf(String eventId) {
    return Long.parseLong(eventId.substring(eventId.lastIndexOf('-') + 1));
  }

  /** Opens the stream; returns once the status and headers arrived. */
  public static SseStream open(HttpMethod method, String url, MultiMap headers, Buffer body) {
    SseStream s = new SseStream();
    StringBuilder pending = new StringBuilder();
    var future = s.client.request(new RequestOptions().setMethod(method).setAbsoluteURI(url).setHeaders(headers))
        .compose(req -> body == null ? req.send() : req.send(body))
        .map(resp -> {
          s.response = resp;
          s.status = resp.statusCode();
          s.headers = resp.headers();
          resp.handler(chunk -> {
            synchronized (pending) {
              s.text.append(chunk.toString());
              pending.append(chunk.toString().replace("\r\n", "\n"));
              int end;
              while ((end = pending.indexOf("\n\n")) >= 0) {
                String block = pending.substring(0, end + 2);
                pending.delete(0, end + 2);
                s.events.addAll(McpHttpClient.SseEvent.parse(block));
              }
            }
          });
          resp.endHandler(v -> s.ended = true);
          return s;
        });
    return future.toCompletionStage().toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  public int status() {
    return status;
  }

  public MultiMap headers() {
    return headers;
  }

  public boolean ended() {
    return ended;
  }

  /** Everything the stream carried so far, as sent: for fields the events do not keep, such as {@code retry:}. */
  public String text() {
    return text.toString();
  }

  /** The next event that carries data, waiting up to {@code millis}; null when none came. */
  public McpHttpClient.SseEvent next(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (true) {
      long left = deadline - System.nanoTime();
      McpHttpClient.SseEvent e = events.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
      if (e == null || e.data() != null) {
        return e;
      }
    }
  }

  /** The next message whose method (or, for a response, whose id) matches, skipping others. */
  public JsonObject await(String method, long millis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (System.nanoTime() < deadline) {
      McpHttpClient.SseEvent e = next(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
      if (e == null) {
        return null;
      }
      if (method.equals(e.data().getString("method")) || (method.equals("response") && e.data().containsKey("id")
          && (e.data().containsKey("result") || e.data().containsKey("error")))) {
        return e.data().put("_event_id", e.id());
      }
    }
    return null;
  }

  @Override
  public void close() {
    client.close();
    vertx.close().toCompletionStage().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
  }
}
