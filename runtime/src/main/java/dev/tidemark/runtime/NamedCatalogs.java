package dev.tidemark.runtime;

import dev.tidemark.contract.NamedCatalog;
import dev.tidemark.contract.NamedTool;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The named tools each database of one node serves now, found through the node's Vert.x instance
 * (several nodes share a JVM in the tests, and each loads its own configuration): the node's
 * loader installs a catalog per database, at start and on every reload; the gateway lists and
 * routes from it, the query role's status and events read it. Listeners hear which database's
 * catalog changed.
 */
public final class NamedCatalogs implements Shareable {

  private static final String MAP = "tidemark.named-catalogs";
  private static final String KEY = "node";

  private final Map<String, NamedCatalog> catalogs = new ConcurrentHashMap<>();
  private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();

  /** The catalogs of the node {@code vertx} belongs to, made on first use. */
  public static NamedCatalogs of(Vertx vertx) {
    Map<String, NamedCatalogs> map = vertx.sharedData().getLocalMap(MAP);
    return map.computeIfAbsent(KEY, k -> new NamedCatalogs());
  }

  /** What {@code database} serves now: {@link NamedCatalog#EMPTY} before its first load. */
  public NamedCatalog get(String database) {
    return catalogs.getOrDefault(database, NamedCatalog.EMPTY);
  }

  /** A tool of that name served for any database, for what must be decided before the database is looked at. */
  public java.util.Optional<NamedTool> anyTool(String name) {
    return catalogs.values().stream().map(c -> c.tool(name)).filter(java.util.Objects::nonNull).findFirst();
  }

  /** Serves {@code catalog} for {@code database} and tells the listeners when the tools it serves changed. */
  public void install(String database, NamedCatalog catalog) {
    NamedCatalog before = catalogs.put(database, catalog);
    // a first load changes what sessions saw only when it serves tools: a node without any starts silently
    if (!(before == null ? NamedCatalog.EMPTY : before).sameToolsAs(catalog)) {
      listeners.forEach(l -> l.accept(database));
    }
  }

  /** {@code listener} hears the name of each database whose served tools changed; the returned action stops it. */
  public Runnable listen(Consumer<String> listener) {
    listeners.add(listener);
    return () -> listeners.remove(listener);
  }
}
