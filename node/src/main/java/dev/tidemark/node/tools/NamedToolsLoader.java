package dev.tidemark.node.tools;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.NamedCatalog;
import dev.tidemark.runtime.NamedCatalogs;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.query.NamedToolCheck;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tools a team defines for one database, on one node with the gateway or the query role: read
 * from the config (database.tools, database.toolsets, database.consumers) or from
 * database.tools-file, which is read again whenever it changes; checked (on a node with the query
 * role by itself, as each role; elsewhere by a node that has it, over the event bus); and installed
 * in the node's {@link NamedCatalogs}, from which the gateway lists and routes and status reports.
 * Every entry that fails is logged with its fault and left out; the others are served.
 */
public final class NamedToolsLoader extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(NamedToolsLoader.class);
  /** How often the tools file is looked at. */
  static final long WATCH_MS = 2_000;
  /** How often a node without the query role asks again for a check no node answered. */
  static final long RETRY_MS = 2_000;

  private final TidemarkConfig config;
  private final Pool pool;
  private final boolean checksHere;
  private final Set<String> builtIns;
  private MessageConsumer<JsonObject> checks;
  private long timer = -1;
  /** The hash of the tools file last loaded, so that a look that finds it unchanged does nothing. */
  private String loadedText;
  private boolean loading;
  private boolean stopped;
  /** The section last given to load: a retry of an older one would undo a newer load. */
  private JsonObject latest;

  /**
   * @param config the view of one database
   * @param checksHere whether this node runs the query role, and so checks statements itself
   * @param builtIns the names of the built-in tools (and of extensions' tools), which no named tool may take
   */
  public NamedToolsLoader(TidemarkConfig config, Pool pool, boolean checksHere, Set<String> builtIns) {
    this.config = config;
    this.pool = pool;
    this.checksHere = checksHere;
    this.builtIns = Set.copyOf(builtIns);
  }

  @Override
  public Future<?> start() {
    DatabaseConfig db = config.database();
    if (checksHere) {
      checks = vertx.eventBus().consumer(Addresses.namedTools(db.name()), msg -> {
        List<NamedTool> tools = new ArrayList<>();
        for (Object t : msg.body().getJsonArray("tools", new JsonArray())) {
          tools.add(NamedTool.fromJson((JsonObject) t));
        }
        NamedToolCheck.check(vertx, db, pool, tools).onComplete(done -> msg.reply(new JsonObject().put("refused",
            new JsonObject(new HashMap<>(done.succeeded() ? done.result() : Map.of())))));
      });
    }
    Future<Void> first = db.toolsFile().isEmpty() ? load(db.namedTools(), "database.") : watch();
    if (!db.toolsFile().isEmpty()) {
      timer = vertx.setPeriodic(WATCH_MS, t -> watch());
    }
    // a node that checks here serves its tools from its start; a gateway alone serves them once a query node answered
    return checksHere ? first : Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    stopped = true;
    vertx.cancelTimer(timer);
    return checks == null ? Future.succeededFuture() : checks.unregister();
  }

  /** Reads the tools file, and loads it when it changed since the last load. */
  private Future<Void> watch() {
    String file = config.database().toolsFile();
    if (loading) {
      return Future.succeededFuture();
    }
    return vertx.fileSystem().readFile(file).compose(bytes -> {
      String text = bytes.toString();
      if (text.equals(loadedText)) {
        return Future.<Void>succeededFuture();
      }
      JsonObject section;
      try {
        section = parse(bytes);
      } catch (IllegalArgumentException e) {
        // a half-written or broken file changes nothing: what is served stays served
        LOG.error("named tools of database {}: {} ({}) is not valid YAML, so the tools served stay as they were: {}",
            config.database().name(), file, ConfigKey.DATABASE_TOOLS_FILE.key(), e.getMessage());
        loadedText = text;
        return Future.<Void>succeededFuture();
      }
      loadedText = text;
      LOG.info("named tools of database {}: loading {}", config.database().name(), file);
      return load(section, "");
    }, err -> {
      if (!err.getMessage().equals(String.valueOf(loadedText))) {
        LOG.error("named tools of database {}: cannot read {} ({}): {}", config.database().name(), file,
            ConfigKey.DATABASE_TOOLS_FILE.key(), err.getMessage());
      }
      loadedText = err.getMessage();
      return Future.succeededFuture();
    });
  }

  /** The YAML of a tools file as JSON; IllegalArgumentException when it is not a mapping. */
  public static JsonObject parse(Buffer bytes) {
    try {
      Object tree = new ObjectMapper(new YAMLFactory())
          .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION).readValue(bytes.getBytes(), Object.class);
      if (tree == null) {
        return new JsonObject();
      }
      if (!(tree instanceof Map<?, ?>)) {
        throw new IllegalArgumentException("its top level must be a mapping of tools, toolsets and consumers");
      }
      return new JsonObject(io.vertx.core.json.Json.encode(tree));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException(e.getMessage().lines().findFirst().orElse("unreadable"));
    }
  }

  /** Checks {@code section} and serves what passes; {@code where} prefixes the entries' names in faults. */
  private Future<Void> load(JsonObject section, String where) {
    latest = section;
    loading = true;
    NamedCatalog.Definitions defs = NamedCatalog.parse(section, builtIns, where);
    return refused(defs.tools()).map(refused -> {
      NamedCatalog catalog = NamedCatalog.assemble(defs, refused, builtIns);
      String db = config.database().name();
      catalog.faults().forEach(f -> LOG.warn("named tools of database {}: {} is not served: {}", db, f.entry(), f.fault()));
      if (!catalog.tools().isEmpty() || !defs.tools().isEmpty()) {
        LOG.info("named tools of database {}: serving {} of {} ({})", db, catalog.tools().size(), defs.tools().size(),
            String.join(", ", catalog.tools().stream().map(NamedTool::name).toList()));
      }
      NamedCatalogs.of(vertx).install(db, catalog);
      if (!stopped && refused.values().stream().anyMatch(f -> f.startsWith(NamedToolCheck.UNREACHABLE))) {
        // PostgreSQL was not there to ask: the entries are not wrong, so they are checked again until it answers
        vertx.setTimer(RETRY_MS * 5, t -> {
          if (latest == section && !stopped) {
            load(section, where);
          }
        });
      }
      return (Void) null;
    }).eventually(() -> {
      loading = false;
      return Future.succeededFuture();
    });
  }

  /** What PostgreSQL refuses of {@code tools}: here, or asked of a node with the query role until one answers. */
  private Future<Map<String, String>> refused(List<NamedTool> tools) {
    if (tools.isEmpty()) {
      return Future.succeededFuture(Map.of());
    }
    if (checksHere) {
      return NamedToolCheck.check(vertx, config.database(), pool, tools);
    }
    JsonArray definitions = new JsonArray();
    tools.forEach(t -> definitions.add(t.toJson()));
    return ask(new JsonObject().put("tools", definitions), true);
  }

  private Future<Map<String, String>> ask(JsonObject body, boolean first) {
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(Math.max(config.busSendTimeoutMs(), 30_000));
    return vertx.eventBus().<JsonObject>request(Addresses.namedTools(config.database().name()), body, options)
        .map(reply -> {
          Map<String, String> out = new HashMap<>();
          reply.body().getJsonObject("refused", new JsonObject()).forEach(e -> out.put(e.getKey(), String.valueOf(e.getValue())));
          return out;
        })
        .recover(err -> {
          if (first) {
            LOG.warn("named tools of database {}: no node with the query role checked them yet ({}); asking again every {} ms",
                config.database().name(), err.getMessage(), RETRY_MS);
          }
          return stopped ? Future.failedFuture(err)
              : timerFuture(RETRY_MS).compose(v -> ask(body, false));
        });
  }

  private Future<Void> timerFuture(long ms) {
    io.vertx.core.Promise<Void> p = io.vertx.core.Promise.promise();
    vertx.setTimer(ms, t -> p.complete());
    return p.future();
  }
}
