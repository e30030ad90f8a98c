// Benchmark, not a test: run by bench/read-bench.sh with `java bench/ReadBench.java` (single-file
// source launch, JDK only), so that the Maven build never runs it; ModuleBoundariesTest compiles it
// only to check that it uses no module's impl.
//
// Opens one MCP session (protocol 2025-11-25) per client thread, then calls one read tool through
// `tools/call` over HTTP as fast as each thread can, for a warm-up and then a measured period. Every
// request sends `Accept: application/json` only, so the gateway answers with one JSON body (no SSE).
//
// Usage: java bench/ReadBench.java <url> <token> <get_row|query> <threads> <warmup-s> <seconds> <server-pid> [postmaster-pid]
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

public class ReadBench {

  static final String VERSION = "2025-11-25";

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String token = args[1];
    String tool = args[2];
    int threads = Integer.parseInt(args[3]);
    int warmup = Integer.parseInt(args[4]);
    int seconds = Integer.parseInt(args[5]);
    long pid = Long.parseLong(args[6]);
    long postmaster = args.length > 7 ? Long.parseLong(args[7]) : -1;

    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10)).build();
    String[] sessions = new String[threads];
    for (int i = 0; i < threads; i++) {
      sessions[i] = initialize(http, url, token);
    }

    long[][] latencies = new long[threads][];
    int[] counts = new int[threads];
    AtomicLong errors = new AtomicLong();
    String[] firstError = new String[1];
    long start = System.nanoTime();
    long measureFrom = start + warmup * 1_000_000_000L;
    long measureTo = measureFrom + seconds * 1_000_000_000L;
    long[] cpuBefore = new long[1];
    CountDownLatch done = new CountDownLatch(threads);
    for (int t = 0; t < threads; t++) {
      int me = t;
      latencies[me] = new long[1 << 20];
      Thread th = new Thread(() -> {
        try {
          long n = 0;
          while (true) {
            long before = System.nanoTime();
            if (before >= measureTo) {
              break;
            }
            String body = call(tool, ++n);
            HttpResponse<String> r = http.send(post(url, token, sessions[me], body), HttpResponse.BodyHandlers.ofString());
            long after = System.nanoTime();
            if (r.statusCode() != 200 || r.body().contains("\"isError\":true") || r.body().contains("\"error\":{")) {
              errors.incrementAndGet();
              synchronized (firstError) {
                if (firstError[0] == null) {
                  firstError[0] = r.statusCode() + " " + r.body();
                }
              }
            }
            if (before >= measureFrom && after <= measureTo && counts[me] < latencies[me].length) {
              latencies[me][counts[me]++] = after - before;
            }
          }
        } catch (Exception e) {
          e.printStackTrace();
        } finally {
          done.countDown();
        }
      });
      th.setDaemon(true);
      th.start();
    }
    // CPU is read at the edges of the measured window: {server ticks, PostgreSQL ticks, when}
    java.util.concurrent.ScheduledExecutorService clock = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    long self = ProcessHandle.current().pid();
    java.util.concurrent.Callable<long[]> snapshot = () -> new long[] {cpuTicks(pid), postmaster < 0 ? 0 : pgTicks(postmaster), System.nanoTime(),
        cpuTicks(self)};
    var atFrom = clock.schedule(snapshot, Math.max(0, measureFrom - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
    var atTo = clock.schedule(snapshot, Math.max(0, measureTo - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
    long[] from = atFrom.get();
    long[] to = atTo.get();
    clock.shutdown();
    cpuBefore[0] = from[0];
    long pgBefore = from[1];
    long cpuFrom = from[2];
    long cpuAfter = to[0];
    long pgAfter = to[1];
    long cpuTo = to[2];
    done.await();

    int total = 0;
    for (int c : counts) {
      total += c;
    }
    long[] all = new long[total];
    int k = 0;
    for (int t = 0; t < threads; t++) {
      System.arraycopy(latencies[t], 0, all, k, counts[t]);
      k += counts[t];
    }
    Arrays.sort(all);
    double measured = (cpuTo - cpuFrom) / 1e9;
    double cpuMs = (cpuAfter - cpuBefore[0]) * 1000.0 / 100.0;  // USER_HZ is 100 on Linux
    System.out.printf("[bench] %s: %d threads, %d s after %d s warm-up: %d calls, %.0f calls/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms,"
            + " server CPU %.0f ms = %.3f ms per call (%.0f%% of one core), errors %d%n",
        tool, threads, seconds, warmup, total, total / measured, pct(all, 0.50), pct(all, 0.99), all.length == 0 ? 0 : all[all.length - 1] / 1e6,
        cpuMs, total == 0 ? 0 : cpuMs / total, cpuMs / 10.0 / measured, errors.get());
    if (postmaster >= 0) {
      double pgMs = (pgAfter - pgBefore) * 10.0;
      System.out.printf("[bench] %s: PostgreSQL (postmaster %d and its children) CPU %.0f ms = %.3f ms per call (%.0f%% of one core)%n",
          tool, postmaster, pgMs, total == 0 ? 0 : pgMs / total, pgMs / 10.0 / measured);
    }
    double clientMs = (to[3] - from[3]) * 10.0;
    System.out.printf("[bench] %s: this load generator (JDK HttpClient, pid %d) CPU %.0f ms = %.3f ms per call (%.0f%% of one core)%n",
        tool, self, clientMs, total == 0 ? 0 : clientMs / total, clientMs / 10.0 / measured);
    if (firstError[0] != null) {
      System.out.println("[bench] first error: " + firstError[0].substring(0, Math.min(400, firstError[0].length())));
    }
  }

  static double pct(long[] sorted, double p) {
    return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) (sorted.length * p))] / 1e6;
  }

  static String call(String tool, long n) {
    int id = ThreadLocalRandom.current().nextInt(1, 501);
    String args = switch (tool) {
      case "get_row" -> "{\"table\":\"customers\",\"key\":" + id + "}";
      case "query" -> "{\"sql\":\"SELECT * FROM orders WHERE customer_id = $1\",\"params\":[" + id + "]}";
      default -> throw new IllegalArgumentException("tool must be get_row or query");
    };
    return "{\"jsonrpc\":\"2.0\",\"id\":" + n + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool + "\",\"arguments\":" + args + "}}";
  }

  static HttpRequest post(String url, String token, String session, String body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .header("Authorization", "Bearer " + token)
        .header("MCP-Protocol-Version", VERSION)
        .timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      b.header("Mcp-Session-Id", session);
    }
    return b.build();
  }

  static String initialize(HttpClient http, String url, String token) throws Exception {
    String init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"" + VERSION
        + "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"read-bench\",\"version\":\"1\"}}}";
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Authorization", "Bearer " + token)
        .POST(HttpRequest.BodyPublishers.ofString(init));
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    String session = r.headers().firstValue("Mcp-Session-Id").orElseThrow(() -> new IllegalStateException(
        "initialize returned no session: " + r.statusCode() + " " + r.body()));
    HttpResponse<String> n = http.send(post(url, token, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
        HttpResponse.BodyHandlers.ofString());
    if (n.statusCode() != 202) {
      throw new IllegalStateException("notifications/initialized: " + n.statusCode() + " " + n.body());
    }
    return session;
  }

  /** utime + stime of the postmaster and every process whose parent it is (its backends). */
  static long pgTicks(long postmaster) throws Exception {
    long sum = 0;
    try (var dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path d : dirs) {
        try {
          String stat = Files.readString(d.resolve("stat"));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          long self = Long.parseLong(d.getFileName().toString());
          if (self == postmaster || Long.parseLong(f[1]) == postmaster) {
            sum += Long.parseLong(f[11]) + Long.parseLong(f[12]);
          }
        } catch (Exception gone) {
          // the process ended while we looked
        }
      }
    }
    return sum;
  }

  /** utime + stime of the process, in clock ticks (fields 14 and 15 of /proc/pid/stat). */
  static long cpuTicks(long pid) throws Exception {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }
}
