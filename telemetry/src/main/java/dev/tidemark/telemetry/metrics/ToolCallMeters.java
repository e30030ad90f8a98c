package dev.tidemark.telemetry.metrics;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolCatalog;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts and times tool calls by tool and outcome. The tool label is a name from the catalog or
 * {@code other}, and the outcome is {@code ok}, an {@link ErrorCode} or {@code protocol_error}:
 * both come from fixed sets, so a caller can neither put its own text in a label nor grow the
 * number of series.
 */
public final class ToolCallMeters {

  public static final String OTHER = "other";
  public static final String OK = "ok";
  /** The call was refused as a JSON-RPC error (unknown tool, arguments that are not an object). */
  public static final String PROTOCOL_ERROR = "protocol_error";

  /** Bucket bounds, from a primary-key read on a warm pool to a statement near its timeout. */
  private static final Duration[] BUCKETS = {
      Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
      Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
      Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30)};

  private static final Logger LOG = LoggerFactory.getLogger("dev.tidemark.gateway.ToolCalls");

  private final MeterRegistry registry;
  /** Each tool's meters, found by its label once per call: no call builds a key or looks a meter up by its tags. */
  private final Map<String, ToolMeters> tools = new ConcurrentHashMap<>();

  ToolCallMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Runs {@code call} and counts how it ended: a {@code CallToolResult}, or a failure the endpoint answers as a JSON-RPC error. */
  public Future<JsonObject> record(Object requestedTool, Supplier<Future<JsonObject>> call) {
    String tool = toolLabel(requestedTool);
    long started = System.nanoTime();
    return call.get().andThen(ar -> {
      long nanos = System.nanoTime() - started;
      String outcome = ar.succeeded() ? outcome(ar.result()) : PROTOCOL_ERROR;
      ToolMeters meters = tools.computeIfAbsent(tool, ToolMeters::new);
      meters.timer.record(nanos, TimeUnit.NANOSECONDS);
      meters.counter(outcome).increment();
      // the one line per call, at debug: with log.format=json it carries the call's ids
      LOG.debug("tool {} ended {} in {} ms", tool, outcome, nanos / 1_000_000);
    });
  }

  /** The tool a call names, as a label: a catalogue name or {@code other}; spans name tools the same way. */
  public static String toolLabel(Object requested) {
    return requested instanceof String name && ToolCatalog.find(name).isPresent() ? name : OTHER;
  }

  /** How a {@code CallToolResult} ended: {@code ok}, its error code, or {@code other}; spans record the same. */
  public static String outcome(JsonObject result) {
    if (result == null || !result.getBoolean("isError", false)) {
      return OK;
    }
    Object code = result.getValue("structuredContent") instanceof JsonObject sc && sc.getValue("error") instanceof JsonObject e
        ? e.getValue("code") : null;
    return ErrorCode.of(code).map(ErrorCode::code).orElse(OTHER);
  }

  /** A tool's timer and its counters by outcome. */
  private final class ToolMeters {
    final String tool;
    final Timer timer;
    /** Registered on the first call that ends so: a series appears once it counts something. */
    final Map<String, Counter> counters = new ConcurrentHashMap<>();

    ToolMeters(String tool) {
      this.tool = tool;
      this.timer = Timer.builder(Meters.TOOL_CALL_DURATION).description("How long tool calls took at the gateway")
          .tag("tool", tool).serviceLevelObjectives(BUCKETS).register(registry);
    }

    Counter counter(String outcome) {
      return counters.computeIfAbsent(outcome, this::register);
    }

    private Counter register(String outcome) {
      return Counter.builder(Meters.TOOL_CALLS).description("Tool calls by tool and outcome")
          .tag("tool", tool).tag("outcome", outcome).register(registry);
    }
  }
}
