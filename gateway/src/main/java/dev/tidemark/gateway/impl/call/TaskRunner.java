package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.ExtensionContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/**
 * Where an extension's tool that goes on as a task runs (the tasks extension): a call's context
 * hands work to it when the client declared the extension, and knows nothing else of tasks.
 */
public interface TaskRunner {

  /** Whether {@code call} declared the tasks extension, so that its tool may go on as a task. */
  boolean declaredBy(Call call);

  /** Runs {@code work} as a task of {@code call}: the call answers with the task once it is stored. */
  Future<JsonObject> runExtension(Call call, String tool, Function<String, Future<Void>> resourceUpdated,
      Function<ExtensionContext, Future<JsonObject>> work);
}
