package dev.tidemark.node.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import dev.tidemark.config.TidemarkConfig.LogConfig;
import org.slf4j.LoggerFactory;

/**
 * Applies {@code log.format} and {@code log.level} once the config is read: the logging library
 * starts before any config exists (with logback.xml's text lines), so the format is swapped on
 * its console appender in place.
 */
public final class LogSetup {

  /** logback.xml's text encoder, kept so that a later node of the same JVM can ask for text again. */
  private static Encoder<ILoggingEvent> text;

  private LogSetup() {}

  public static synchronized void apply(LogConfig log) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)
        || !(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDERR") instanceof ConsoleAppender<ILoggingEvent> console)) {
      return; // another SLF4J provider or configuration: it keeps its own settings
    }
    context.getLogger("dev.tidemark").setLevel(Level.toLevel(log.level(), Level.INFO));
    if (text == null) {
      text = console.getEncoder();
    }
    Encoder<ILoggingEvent> wanted = "json".equals(log.format()) ? json(context) : text;
    if (console.getEncoder() == text && wanted == text) {
      return;
    }
    console.stop();
    console.setEncoder(wanted);
    console.start();
  }

  private static Encoder<ILoggingEvent> json(LoggerContext context) {
    JsonLineLayout layout = new JsonLineLayout();
    layout.setContext(context);
    layout.start();
    LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
    encoder.setContext(context);
    encoder.setLayout(layout);
    encoder.start();
    return encoder;
  }
}
