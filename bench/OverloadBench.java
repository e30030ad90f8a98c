// Benchmark, not a test: run by bench/overload.sh with `java bench/OverloadBench.java` (single-file
// source launch, JDK only), so that the Maven build never runs it.
//
// Sends more calls at once than one caller may run: each client thread loops stateless 2026-07-28
// `tools/call` requests of `query` with a statement that holds its connection for a while, and
// sorts every answer by how it ended (a result, a tool error by its code and waited_for, an HTTP
// status, or no answer within the client's timeout), with the latency of each kind. What it shows:
// calls beyond capacity are refused quickly and retriably, the calls admitted keep a bounded
// latency, nothing hangs, and nothing ends as INTERNAL.
//
// Usage: java bench/OverloadBench.java <url> <token> <threads> <warmup-s> <seconds> <sleep-ms> [backoff-ms]
// backoff-ms: how long a client waits after a retriable refusal before it sends again (0: at once,
// as a hostile or careless client does).
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class OverloadBench {

  static final Pattern CODE = Pattern.compile("\"code\":\"([A-Z_]+)\"");
  static final Pattern WAITED_FOR = Pattern.compile("\"waited_for\":\"([a-z_]+)\"");
  static final Pattern RPC_CODE = Pattern.compile("\"error\":\\{\"code\":(-?[0-9]+)");
  static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(30);

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String token = args[1];
    int threads = Integer.parseInt(args[2]);
    int warmup = Integer.parseInt(args[3]);
    int seconds = Integer.parseInt(args[4]);
    double sleepSeconds = Integer.parseInt(args[5]) / 1000.0;
    long backoffMs = args.length > 6 ? Long.parseLong(args[6]) : 0;

    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();
    String meta = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
        + "\"io.modelcontextprotocol/clientCapabilities\":{},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"overload\",\"version\":\"1\"}}";
    long start = System.nanoTime();
    long measureFrom = start + warmup * 1_000_000_000L;
    long measureTo = measureFrom + seconds * 1_000_000_000L;
    List<Map<String, List<Long>>> perThread = new ArrayList<>();
    CountDownLatch done = new CountDownLatch(threads);
    for (int t = 0; t < threads; t++) {
      Map<String, List<Long>> mine = new TreeMap<>();
      perThread.add(mine);
      int n = t;
      Thread thread = new Thread(() -> {
        try {
          for (long i = 0; System.nanoTime() < measureTo; i++) {
            String body = "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"tools/call\",\"params\":{\"name\":\"query\",\"arguments\":"
                + "{\"sql\":\"SELECT $1::int AS n FROM pg_sleep(" + sleepSeconds + ")\",\"params\":[" + n + "]}," + meta + "}}";
            HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(CLIENT_TIMEOUT)
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .header("Accept", "application/json").header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call").header("Mcp-Name", "query")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            long sent = System.nanoTime();
            String kind;
            try {
              HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
              kind = classify(r.statusCode(), r.body());
            } catch (java.net.http.HttpConnectTimeoutException e) {
              kind = "no connection within 10 s";
            } catch (HttpTimeoutException e) {
              kind = "no answer within " + CLIENT_TIMEOUT.toSeconds() + " s";
            } catch (java.io.IOException e) {
              kind = "connection failed: " + e.getClass().getSimpleName();
            }
            long took = System.nanoTime() - sent;
            if (sent >= measureFrom && sent < measureTo) {
              mine.computeIfAbsent(kind, k -> new ArrayList<>()).add(took);
            }
            if (backoffMs > 0 && (kind.startsWith("tool error UNAVAILABLE") || kind.startsWith("HTTP 429") || kind.startsWith("HTTP 503")
                || kind.startsWith("connection failed"))) {
              Thread.sleep(backoffMs);
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } finally {
          done.countDown();
        }
      });
      thread.setDaemon(true);
      thread.start();
    }
    done.await();
    Map<String, List<Long>> all = new TreeMap<>();
    for (Map<String, List<Long>> m : perThread) {
      m.forEach((k, v) -> all.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
    }
    long total = all.values().stream().mapToLong(List::size).sum();
    System.out.printf("[bench] overload: %d clients, %d s after %d s of warm-up, statements of %.0f ms, %d ms back-off after a refusal: %d answers, %.0f/s%n",
        threads, seconds, warmup, sleepSeconds * 1000, backoffMs, total, total / (double) seconds);
    all.forEach((kind, list) -> {
      long[] ns = list.stream().mapToLong(Long::longValue).toArray();
      Arrays.sort(ns);
      System.out.printf("[bench]   %s: %d (%.0f/s), p50 %.1f ms, p99 %.1f ms, max %.1f ms%n", kind, ns.length, ns.length / (double) seconds,
          at(ns, 0.50), at(ns, 0.99), ns[ns.length - 1] / 1e6);
    });
  }

  /** How an answer ended: a result, a tool error by code (and what it waited for), or an HTTP status. */
  static String classify(int status, String body) {
    if (status != 200) {
      Matcher code = CODE.matcher(body);
      return "HTTP " + status + (code.find() ? " " + code.group(1) : "");
    }
    if (!body.contains("\"isError\":true")) {
      if (body.contains("\"result\"")) {
        return "result";
      }
      Matcher rpc = RPC_CODE.matcher(body);
      return "JSON-RPC error" + (rpc.find() ? " " + rpc.group(1) : "");
    }
    Matcher code = CODE.matcher(body);
    Matcher waited = WAITED_FOR.matcher(body);
    return "tool error " + (code.find() ? code.group(1) : "without a code") + (waited.find() ? ", waited_for " + waited.group(1) : "");
  }

  static double at(long[] sorted, double q) {
    return sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))] / 1e6;
  }
}
