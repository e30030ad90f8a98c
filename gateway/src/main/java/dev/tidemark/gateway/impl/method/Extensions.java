package dev.tidemark.gateway.impl.method;

import dev.tidemark.gateway.McpExtension;
import io.vertx.core.Future;
import java.util.List;
import java.util.function.Function;

/** Asking the extensions in turn: the first that knows the name or URI answers. */
public final class Extensions {

  private Extensions() {}

  /** The first non-null answer, asking each extension only when the ones before it had none. */
  public static <T> Future<T> firstOf(List<McpExtension> extensions, Function<McpExtension, Future<T>> ask) {
    Future<T> result = Future.succeededFuture(null);
    for (McpExtension e : extensions) {
      result = result.compose(found -> found != null ? Future.succeededFuture(found) : ask.apply(e));
    }
    return result;
  }
}
