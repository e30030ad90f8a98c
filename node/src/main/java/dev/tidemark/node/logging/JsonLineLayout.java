package dev.tidemark.node.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.LayoutBase;
import dev.tidemark.telemetry.LogContext;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One JSON object per line: time, level, logger, message, the request's ids where known (read at
 * the time of the call, on the thread that logs, so a request's context is still current), and
 * the error with its stack. Ids that are unknown are absent, not empty.
 */
public final class JsonLineLayout extends LayoutBase<ILoggingEvent> {

  static final List<String> IDS = List.of(LogContext.REQUEST_ID, LogContext.SESSION_ID, LogContext.CALLER_ID, LogContext.TRACE_ID);

  @Override
  public String doLayout(ILoggingEvent event) {
    JsonObject line = new JsonObject()
        .put("time", Instant.ofEpochMilli(event.getTimeStamp()).toString())
        .put("level", event.getLevel().toString())
        .put("logger", event.getLoggerName())
        .put("message", event.getFormattedMessage());
    Map<String, String> ids = LogContext.current();
    for (String id : IDS) {
      String value = ids.get(id);
      if (value == null) {
        value = event.getMDCPropertyMap().get(id);
      }
      if (value != null && !value.isEmpty()) {
        line.put(id, value);
      }
    }
    if (event.getThrowableProxy() != null) {
      line.put("error", render(event.getThrowableProxy()));
    }
    return line.encode() + "\n";
  }

  private static String render(IThrowableProxy error) {
    StringBuilder sb = new StringBuilder();
    for (IThrowableProxy t = error; t != null; t = t.getCause()) {
      sb.append(t == error ? "" : "\nCaused by: ").append(t.getClassName()).append(": ").append(t.getMessage());
      for (StackTraceElementProxy frame : t.getStackTraceElementProxyArray()) {
        sb.append("\n\tat ").append(frame.getStackTraceElement());
      }
    }
    return sb.toString();
  }
}
