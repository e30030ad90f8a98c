package dev.tidemark.gateway.impl.task;

import dev.tidemark.gateway.impl.call.TaskRunner;
import dev.tidemark.config.TidemarkConfig.TasksConfig;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.Service;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.gateway.ExtensionContext;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Cancellation;
import dev.tidemark.gateway.impl.call.InFlight;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.service.ServiceClient;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.Meta;
import dev.tidemark.gateway.impl.service.ResultRenderer;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code io.modelcontextprotocol/tasks} extension: a {@code tools/call} of a client that declared
 * it may answer with a task instead of its result, and {@code tasks/get}, {@code tasks/update} and
 * {@code tasks/cancel} follow the task from any gateway, as long as it is kept.
 *
 * <p>What waits becomes a task: a change that became a proposal (it completes when a person
 * decides: nothing runs for it, and its state is the proposal's, in PostgreSQL), and a call of
 * {@code query}, {@code explain} with {@code analyze}, {@code migrate} or {@code restore_rows} that
 * has not answered within {@code tasks.promote-after-ms} (it runs on in the gateway that took it,
 * which writes its outcome into PostgreSQL, {@link TaskStore}). A task belongs to the caller that started it, on
 * the database it started on; any other caller, and anyone after it expired, finds no task, with
 * the same error as for an id that never existed.
 */
public final class Tasks implements TaskRunner {

  private static final Logger LOG = LoggerFactory.getLogger(Tasks.class);

  public static final String EXTENSION = "io.modelcontextprotocol/tasks";
  /** How a running task is held in {@link InFlight}, so that {@code tasks/cancel} on any gateway finds it. */
  static final String KEY_PREFIX = "task|";
  /** A proposal's task suggests polling this many times less often than a running one: a person decides. */
  static final int PROPOSAL_POLL_FACTOR = 5;

  static final String UNKNOWN = "Unknown task: none of your tasks has this taskId. A task is kept for its ttlMs from its creation;"
      + " an expired task, and another caller's, are unknown too.";
  static final String LOST = "The gateway that ran this task left the cluster before the task ended, so its outcome is lost; call the"
      + " tool again (a change sent again with the same idempotency_key is applied at most once).";
  static final String STOPPED = "The gateway that ran this task stopped before the task ended, and cancelled it; call the tool again"
      + " (a change sent again with the same idempotency_key is applied at most once).";
  static final String REVOKED = "Cancelled: the token of the caller that started it was revoked.";
  static final String CANCELLED = "Cancelled by the client.";

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Pattern ID = Pattern.compile("task_[A-Za-z0-9_-]{22}");

  private final Vertx vertx;
  private final TaskStore store;
  private final TasksConfig config;
  private final int maxRunningPerCaller;
  private final InFlight inFlight;
  private final ServiceClient services;
  /** How each task that runs on this node ends when the node stops, by the key it is held under. */
  private final Map<String, Supplier<Future<Void>>> here = new ConcurrentHashMap<>();
  /** The tasks each caller runs on this gateway now. */
  private final Map<String, Integer> running = new ConcurrentHashMap<>();

  /**
   * @param maxRunningPerCaller the most tasks one caller runs at once on this gateway (a proposal's
   *     task runs nothing and does not count); past it a long call stays a plain call
   */
  public Tasks(Vertx vertx, TasksConfig config, int maxRunningPerCaller, InFlight inFlight, ServiceClient services) {
    this.vertx = vertx;
    this.store = new TaskStore(services);
    this.config = config;
    this.maxRunningPerCaller = maxRunningPerCaller;
    this.inFlight = inFlight;
    this.services = services;
  }

  // ---- what a call may become ----

  /** Whether the request declared the extension: in its capabilities (a session's, or 2026-07-28's {@code _meta}) or in its own {@code _meta}. */
  public static boolean declared(Call call) {
    return declares(call.clientCapabilities())
        || call.params().getValue("_meta") instanceof JsonObject meta && meta.getValue(Meta.CAPABILITIES) instanceof JsonObject c && declares(c);
  }

  @Override
  public boolean declaredBy(Call call) {
    return declared(call);
  }

  private static boolean declares(JsonObject capabilities) {
    return capabilities != null && capabilities.getValue("extensions") instanceof JsonObject e && e.containsKey(EXTENSION);
  }

  /** The refusal of {@code what} to a client that did not declare the extension: -32021, naming it. */
  public static RpcFailure missingExtension(Call call, String what) {
    return new RpcFailure(JsonRpc.MISSING_REQUIRED_CLIENT_CAPABILITY, what + " needs the " + EXTENSION + " extension, which this request"
        + " does not declare: declare it in the client's capabilities.extensions (in _meta." + Meta.CAPABILITIES + " on 2026-07-28,"
        + " in initialize before).", call.modern() ? 400 : 200, new JsonObject().put("requiredCapabilities",
        new JsonObject().put("extensions", new JsonObject().put(EXTENSION, new JsonObject()))));
  }

  /** Whether a call of {@code tool} may go on as a task when it runs long: the client declared the extension, and the tool waits on a statement. */
  public boolean promotes(Call call, String tool, JsonObject arguments) {
    boolean longRunning = switch (tool) {
      case ToolCatalog.QUERY, ToolCatalog.MIGRATE, ToolCatalog.RESTORE_ROWS -> true;
      case ToolCatalog.EXPLAIN -> Boolean.TRUE.equals(arguments.getValue("analyze"));
      default -> false;
    };
    return longRunning && declared(call);
  }

  /**
   * The answer of a call whose {@code reply} may be slow: {@code inline} of the reply when it comes
   * within {@code tasks.promote-after-ms}, else a task, whose result is {@code background} of the
   * reply (asking the user anything is {@code inline}'s alone: once the call answered with a task,
   * no one is on its stream to ask). A caller that runs its most tasks on this gateway already, or a
   * map that cannot be written, keeps the call a plain one.
   */
  public Future<JsonObject> whenSlow(Call call, String tool, String requestId, Future<ToolReply> reply,
      Function<ToolReply, Future<JsonObject>> inline, Function<ToolReply, JsonObject> background) {
    long startedAt = System.currentTimeMillis();
    Promise<JsonObject> answer = Promise.promise();
    // 0 undecided, 1 answered inline, 2 became a task: the timer and the reply may race
    AtomicInteger state = new AtomicInteger();
    long timer = vertx.setTimer(Math.max(1, config.promoteAfterMs()), t -> {
      if (reply.isComplete() || !reserve(call) ) {
        return;
      }
      if (!state.compareAndSet(0, 2)) {
        unreserve(call);
        return;
      }
      run(call, tool, requestId, startedAt, task -> reply.map(background), () -> unreserve(call))
          .onSuccess(answer::tryComplete)
          .onFailure(err -> {
            LOG.warn("call of {} could not become a task ({}); it stays a plain call", tool, err.toString());
            unreserve(call);
            reply.compose(inline).onComplete(answer);
          });
    });
    reply.onComplete(ar -> {
      if (state.compareAndSet(0, 1)) {
        vertx.cancelTimer(timer);
        reply.compose(inline).onComplete(answer);
      }
    });
    return answer.future();
  }

  /**
   * An extension's tool that goes on as a task: the call answers with the task once it is stored,
   * and {@code work} runs with a context whose questions wait in the task's {@code inputRequests}.
   */
  @Override
  public Future<JsonObject> runExtension(Call call, String tool, Function<String, Future<Void>> resourceUpdated,
      Function<ExtensionContext, Future<JsonObject>> work) {
    if (!reserve(call)) {
      return Future.succeededFuture(ResultRenderer.render(tool, ToolReply.failed(tooMany())));
    }
    return run(call, tool, null, System.currentTimeMillis(), task -> {
      TaskContext context = new TaskContext(vertx, call, task.id(), store, resourceUpdated);
      Future<JsonObject> done;
      try {
        done = work.apply(context);
      } catch (RuntimeException e) {
        done = Future.failedFuture(e);
      }
      return done.eventually(context::close);
    }, () -> unreserve(call)).recover(err -> {
      unreserve(call);
      return Future.failedFuture(err);
    });
  }

  /**
   * {@code result} of a change tool, or, when it says the change became a proposal and the client
   * declared the extension, a task that follows the proposal. When the task cannot be stored, the
   * proposal's own result stands: {@code status} with {@code proposal} follows it as well.
   */
  public Future<JsonObject> followProposal(Call call, String tool, JsonObject result) {
    String proposalId = proposalOf(result);
    if (proposalId == null || !declared(call)) {
      return Future.succeededFuture(result);
    }
    Task task = Task.proposal(newId(), call, tool, proposalId, ttl(call, true), proposalPollMs());
    return store.create(call, task).map(v -> task.created(waiting(task)))
        .otherwise(err -> {
          LOG.warn("proposal {} could not be followed by a task ({}); answered with the proposal", proposalId, err.toString());
          return result;
        });
  }

  // ---- running tasks ----

  /**
   * Stores a task for {@code call} and runs {@code work} for it in this gateway: held with the calls
   * in flight (so that a cancellation, a revocation or a drain finds it), ended when it expires, and
   * its outcome written when it ends. Completes with the {@code CreateTaskResult}.
   */
  private Future<JsonObject> run(Call call, String tool, String requestId, long startedAt, Function<Task, Future<JsonObject>> work,
      Runnable ended) {
    Task task = Task.call(newId(), call, tool, nodeId(), requestId, startedAt, ttl(call, false), config.pollIntervalMs());
    return store.create(call, task).map(v -> {
      String key = InFlight.heldKey(KEY_PREFIX + task.id(), 0);
      Cancellation cancellation = call.cancellation();
      // tasks/cancel wrote the task's end before it reached this gateway; a revocation and a drain write their own
      Runnable revoke = () -> endHere(call, key, cancellation, task, t -> t.cancelled(REVOKED));
      Supplier<Future<Void>> stop = () -> endHere(call, key, cancellation, task, t -> t.failed(lostError(STOPPED), STOPPED));
      Runnable drain = stop::get;
      here.put(key, stop);
      boolean held = inFlight.holdCall(key, new InFlight.Held(call.caller(), cancellation::cancel, revoke, drain),
          call.authenticatedAtNanos());
      long timer = vertx.setTimer(Math.max(1, task.expiresAt() - System.currentTimeMillis()), t -> {
        if (inFlight.releaseCall(key)) {
          cancellation.cancel(); // no one can read the outcome any more
          store.remove(call, task.id());
        }
      });
      // once, when the work ends or is cancelled (work that ignores a cancellation must not hold its caller's count)
      java.util.concurrent.atomic.AtomicBoolean over = new java.util.concurrent.atomic.AtomicBoolean();
      Runnable end = () -> {
        if (over.compareAndSet(false, true)) {
          here.remove(key);
          vertx.cancelTimer(timer);
          ended.run();
        }
      };
      cancellation.onCancel(end);
      Future<JsonObject> done = held ? work.apply(task) : Future.failedFuture(new IllegalStateException("revoked"));
      done.onComplete(ar -> {
        end.run();
        if (inFlight.releaseCall(key)) {
          finish(call, task, ar);
        }
      });
      return task.created("The call goes on as a task; tasks/get answers with its result once it ends.");
    });
  }

  private Future<Void> endHere(Call call, String key, Cancellation cancellation, Task task, java.util.function.UnaryOperator<Task> end) {
    if (!inFlight.releaseCall(key)) {
      return Future.succeededFuture();
    }
    cancellation.cancel();
    stopStatement(task);
    return store.update(call, task.id(), t -> t.terminal() ? null : end.apply(t)).<Void>mapEmpty()
        .onFailure(err -> LOG.warn("the end of task {} could not be stored: {}", task.id(), err.toString()));
  }

  /**
   * The node stops: every task that runs on it ends as {@code failed} with a retriable error, as a
   * drain ends it, so that its client calls again; a task whose end cannot be written any more is
   * found lost by the next {@code tasks/get} on another node.
   */
  public Future<Void> stop() {
    return Future.join(here.values().stream().map(Supplier::get).toList()).<Void>mapEmpty().otherwiseEmpty();
  }

  /** Writes what a running task came to, unless it ended otherwise first (cancelled, expired). */
  private void finish(Call call, Task task, AsyncResult<JsonObject> ar) {
    Future<Task> written;
    if (ar.failed()) {
      JsonObject error = errorOf(ar.cause());
      written = store.update(call, task.id(), t -> t.terminal() ? null : t.failed(error, "The task failed: " + error.getString("message")));
    } else if (proposalOf(ar.result()) != null) {
      String proposalId = proposalOf(ar.result());
      written = store.update(call, task.id(), t -> t.terminal() ? null : t.followingProposal(proposalId, ttl(call, true), proposalPollMs()));
    } else {
      written = store.update(call, task.id(), t -> t.terminal() ? null : t.completed(ar.result(), null));
    }
    written.onFailure(err -> LOG.warn("the outcome of task {} could not be stored: {}", task.id(), err.toString()));
  }

  private static JsonObject errorOf(Throwable err) {
    if (err instanceof RpcFailure f) {
      JsonObject error = new JsonObject().put("code", f.code()).put("message", f.getMessage());
      return f.data() == null ? error : error.put("data", f.data());
    }
    LOG.warn("a task failed", err);
    return new JsonObject().put("code", JsonRpc.INTERNAL_ERROR).put("message", "The task failed unexpectedly; call the tool again, and"
        + " report it if it persists.");
  }

  /** A failure that the same call, sent again, may not meet: the gateway that ran it is gone. */
  private static JsonObject lostError(String message) {
    return new JsonObject().put("code", JsonRpc.INTERNAL_ERROR).put("message", message)
        .put("data", new JsonObject().put("code", ErrorCode.UNAVAILABLE.code()).put("retriable", true));
  }

  // ---- tasks/get, tasks/update, tasks/cancel ----

  public Future<JsonObject> get(Call call) {
    return owned(call).compose(task -> {
      if (task.terminal()) {
        return Future.succeededFuture(detailed(task));
      }
      if (Task.PROPOSAL.equals(task.kind())) {
        return decided(call, task);
      }
      if (ownerGone(task)) {
        return store.update(call, task.id(), t -> t.terminal() || !Task.CALL.equals(t.kind()) ? null : t.failed(lostError(LOST), LOST))
            .map(t -> {
              stopStatement(task);
              return detailed(t == null ? task : t);
            });
      }
      return Future.succeededFuture(detailed(task));
    });
  }

  public Future<JsonObject> update(Call call) {
    if (declared(call) && !(call.params().getValue("inputResponses") instanceof JsonObject)) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "params.inputResponses must be an object: each key of the"
          + " task's inputRequests you answer, with the client's result for it."));
    }
    return owned(call).compose(task -> {
      JsonObject responses = call.params().getJsonObject("inputResponses");
      Set<String> answered = new HashSet<>(responses.fieldNames());
      answered.retainAll(task.inputRequests().fieldNames());
      if (answered.isEmpty()) {
        return Future.succeededFuture(ack()); // keys not asked (or no longer) are ignored
      }
      return store.update(call, task.id(), t -> {
        Set<String> still = new HashSet<>(answered);
        still.retainAll(t.inputRequests().fieldNames());
        return still.isEmpty() ? null : t.answered(still);
      }).map(t -> {
        JsonObject delivered = new JsonObject();
        answered.forEach(k -> delivered.put(k, responses.getValue(k)));
        vertx.eventBus().publish(Addresses.taskInput(task.id()), new JsonObject().put("responses", delivered));
        return ack();
      });
    });
  }

  public Future<JsonObject> cancel(Call call) {
    return owned(call).compose(task -> {
      if (task.terminal()) {
        return Future.succeededFuture(ack());
      }
      String message = Task.PROPOSAL.equals(task.kind())
          ? "No longer followed by this task; proposal " + task.proposalId() + " still waits for a person (status with proposal: "
              + task.proposalId() + " follows it)."
          : CANCELLED;
      return store.update(call, task.id(), t -> t.terminal() ? null : t.cancelled(message)).map(t -> {
        if (Task.CALL.equals(task.kind())) {
          // the gateway that runs it stops its work; the statement is stopped where it runs even when that gateway is gone
          vertx.eventBus().publish(Addresses.GATEWAY_CANCEL_V1, new JsonObject().put("key", KEY_PREFIX + task.id()));
          stopStatement(task);
        }
        return ack();
      });
    });
  }

  private static JsonObject ack() {
    return new JsonObject().put("resultType", "complete");
  }

  /** The caller's task that the request names; an id that is malformed, unknown, expired or another caller's is refused alike. */
  private Future<Task> owned(Call call) {
    if (!declared(call)) {
      return Future.failedFuture(missingExtension(call, call.method()));
    }
    Object id = call.params().getValue("taskId");
    if (!(id instanceof String s) || s.isEmpty()) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "params.taskId must be the taskId a tools/call answered with."));
    }
    if (!ID.matcher(s).matches()) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, UNKNOWN));
    }
    return store.find(call, s).compose(task -> task != null && task.visibleTo(call, System.currentTimeMillis())
        ? Future.succeededFuture(task) : Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, UNKNOWN)));
  }

  private JsonObject detailed(Task task) {
    return task.detailed(task.terminal() ? null : Task.PROPOSAL.equals(task.kind()) ? waiting(task)
        : Task.INPUT_REQUIRED.equals(task.status()) ? "Waiting for the client: answer inputRequests with tasks/update."
        : task.tool() + " has run for " + (System.currentTimeMillis() - task.startedAt()) / 1000 + " s.");
  }

  private static String waiting(Task task) {
    return "Proposal " + task.proposalId() + " waits for a person to approve or reject it; nothing is written until then. This task"
        + " completes when they decide.";
  }

  // ---- proposals ----

  /** A proposal's task as the proposal now stands: the command role reads it for the caller, and a decision ends the task. */
  private Future<JsonObject> decided(Call call, Task task) {
    ToolDescriptor route = ToolCatalog.find(task.tool()).filter(t -> t.service() == Service.COMMAND)
        .orElseGet(() -> ToolCatalog.find(ToolCatalog.EXECUTE).orElseThrow());
    return services.send(route, ServiceClient.request(call, Actions.PROPOSAL_STATE, new JsonObject().put("proposal_id", task.proposalId())))
        .compose(reply -> {
          ProposalOutcome outcome = ProposalOutcome.of(task.tool(), task.proposalId(), reply);
          if (outcome.result() == null) {
            return Future.succeededFuture(outcome.note() == null ? detailed(task)
                : task.detailed(waiting(task) + " " + outcome.note()));
          }
          return store.update(call, task.id(), t -> t.terminal() ? null : t.completed(outcome.result(), outcome.note()))
              .map(t -> detailed(t == null ? task : t));
        });
  }

  /** The proposal a change tool's result says it became, or null. */
  static String proposalOf(JsonObject result) {
    return result != null && !Boolean.TRUE.equals(result.getValue("isError"))
        && result.getValue("structuredContent") instanceof JsonObject s && "proposed".equals(s.getValue("mode"))
        && s.getValue("proposal_id") instanceof String id ? id : null;
  }

  // ---- helpers ----

  /** How long {@code call}'s task is kept: what it asks ({@code task.ttlMs}, or the 2025-11-25 form {@code task.ttl}), at most tasks.max-ttl-ms. */
  long ttl(Call call, boolean proposal) {
    Object asked = call.params().getValue("task") instanceof JsonObject t ? t.getValue("ttlMs", t.getValue("ttl")) : null;
    if (asked instanceof Number n && n.longValue() > 0) {
      return Math.min(n.longValue(), config.maxTtlMs());
    }
    return proposal ? config.maxTtlMs() : config.ttlMs();
  }

  private long proposalPollMs() {
    return config.pollIntervalMs() * PROPOSAL_POLL_FACTOR;
  }

  /** Counts a task of {@code call}'s caller; false when it runs its most on this gateway already. */
  boolean reserve(Call call) {
    boolean[] granted = {false};
    running.compute(call.caller().id(), (caller, n) -> {
      int now = n == null ? 0 : n;
      granted[0] = now < maxRunningPerCaller;
      return granted[0] ? now + 1 : (now == 0 ? null : now);
    });
    return granted[0];
  }

  void unreserve(Call call) {
    running.computeIfPresent(call.caller().id(), (caller, n) -> n <= 1 ? null : n - 1);
  }

  private ToolException tooMany() {
    return new ToolException(ErrorCode.UNAVAILABLE, "Too many of your tasks run on this node: at most " + maxRunningPerCaller
        + " at once. Wait for one to end, or cancel one with tasks/cancel.", new JsonObject().put("max_running_tasks", maxRunningPerCaller));
  }

  /** Stops the statement of a call task where it runs, whichever node that is. */
  private void stopStatement(Task task) {
    if (task.requestId() != null) {
      vertx.eventBus().publish(Addresses.cancel(task.database()), new JsonObject().put("request_id", task.requestId()));
    }
  }

  /** Whether the gateway that ran {@code task} is no longer a member of the cluster. */
  private boolean ownerGone(Task task) {
    ClusterManager manager = vertx instanceof VertxInternal internal ? internal.clusterManager() : null;
    if (task.node() == null || manager == null) {
      return false;
    }
    try {
      return !manager.getNodes().contains(task.node());
    } catch (RuntimeException leaving) {
      return false; // this node is leaving the cluster itself
    }
  }

  private String nodeId() {
    ClusterManager manager = vertx instanceof VertxInternal internal ? internal.clusterManager() : null;
    return manager == null ? null : manager.getNodeId();
  }

  /** 128 random bits: a task id is as good as unguessable, and names nothing about its caller. */
  static String newId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return "task_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
