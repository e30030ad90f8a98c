package dev.tidemark.query.events.impl;

import static dev.tidemark.query.events.impl.EventErrors.unavailable;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * events_seek, and the control broadcast it needs: Kafka moves only a share group without
 * members, so a seek tells every node ({@link Addresses#eventsControl}) to close the consumer's
 * share consumers and hold its events_next, waits for the group to be empty, moves it, and
 * lets the nodes serve it again.
 */
public final class Seek {

  /** How long a seek waits for the consumer's share consumers on every node to leave its group. */
  public static final long EMPTY_WAIT_MS = 10_000;

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final GroupAdmin admin;
  private final Consumers consumers;
  private final DeadLetters deadLetters;
  private final ConsumerStore store;
  private final SharePool pool;

  public Seek(Vertx vertx, TidemarkConfig config, GroupAdmin admin, Consumers consumers, DeadLetters deadLetters, ConsumerStore store,
      SharePool pool) {
    this.vertx = vertx;
    this.config = config;
    this.admin = admin;
    this.consumers = consumers;
    this.deadLetters = deadLetters;
    this.store = store;
    this.pool = pool;
  }

  public Future<ToolReply> seek(ToolRequest request) {
    Caller caller = request.caller();
    if (!config.events().adminRoles().contains(caller.pgRole())) {
      return Future.failedFuture(new ToolException(ErrorCode.PERMISSION_DENIED, "events_seek is for events administrators (roles in "
          + "events.admin-roles); your role is not one. " + ErrorCode.PERMISSION_DENIED.hint()));
    }
    String name = request.arguments().getString("consumer");
    String to = request.arguments().getString("to");
    OffsetDateTime time;
    String mode;
    switch (to) {
      case "earliest", "latest" -> {
        mode = to;
        time = null;
      }
      case "dead_letters" -> {
        mode = "keep";
        time = null;
      }
      default -> {
        try {
          time = OffsetDateTime.parse(to);
        } catch (DateTimeParseException e) {
          return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "to is earliest, latest, dead_letters or an ISO 8601"
              + " time with an offset, such as 2026-01-12T10:15:00Z.", new JsonObject().put("argument", "to")));
        }
        mode = "time";
      }
    }
    return consumers.existing(caller, name).compose(c -> deadLetters.copy(c).compose(x -> admin.partitions())
        .compose(tps -> target(c, to, time, tps)).compose(target -> {
          if (target.isEmpty()) {
            return Future.succeededFuture(ToolReply.ok("events_seek: no dead letters to re-drive",
                new JsonObject().put("position", new JsonArray()).put("redriven", 0)));
          }
          String control = Addresses.eventsControl(config.database().name());
          vertx.eventBus().publish(control, new JsonObject().put("group", c.group()).put("action", "hold")
              .put("hold_ms", EMPTY_WAIT_MS + 5000));
          return empty(c.group(), System.currentTimeMillis() + EMPTY_WAIT_MS)
              .compose(x -> admin.move(c.group(), target)
                  .recover(err -> Future.failedFuture(unavailable("Kafka did not move the consumer: " + err.getMessage()))))
              .compose(x -> store.moved(c.group(), mode, time, "dead_letters".equals(to)))
              .compose(redriven -> store.find(c.owner(), c.name()).map(moved -> {
                JsonArray position = new JsonArray();
                target.forEach((tp, offset) -> position.add(new JsonObject().put("partition", tp.partition()).put("offset", offset)));
                Instant from = moved.orElseThrow().deliversFrom();
                vertx.eventBus().publish(control, new JsonObject().put("group", c.group()).put("action", "resume")
                    .put("delivers_from", from == null ? null : from.toString()));
                return ToolReply.ok("events_seek: " + name + " moved to " + to, new JsonObject().put("position", position)
                    .put("redriven", redriven));
              }))
              .onFailure(err -> vertx.eventBus().publish(control, new JsonObject().put("group", c.group()).put("action", "resume")));
        }));
  }

  /** Where each partition goes: empty for dead_letters when there are none. */
  private Future<Map<TopicPartition, Long>> target(Consumer c, String to, OffsetDateTime time, List<TopicPartition> tps) {
    if ("dead_letters".equals(to)) {
      return store.oldestDeadLetters(c.group()).map(oldest -> {
        Map<TopicPartition, Long> out = new HashMap<>();
        oldest.forEach(e -> out.put(new TopicPartition(admin.topic(), Integer.parseInt(e.getKey())), ((Number) e.getValue()).longValue()));
        return out;
      });
    }
    OffsetSpec spec = "earliest".equals(to) ? OffsetSpec.earliest() : "latest".equals(to) ? OffsetSpec.latest()
        : OffsetSpec.forTimestamp(time.toInstant().toEpochMilli());
    return admin.offsets(tps, spec).compose(found -> {
      if (!found.containsValue(-1L)) {
        return Future.succeededFuture(found);
      }
      return admin.offsets(tps, OffsetSpec.latest()).map(ends -> {
        Map<TopicPartition, Long> out = new HashMap<>(found);
        out.replaceAll((tp, o) -> o < 0 ? ends.get(tp) : o);
        return out;
      });
    });
  }

  /** Completes once the group has no members; UNAVAILABLE at {@code deadlineMs}. */
  private Future<Void> empty(String group, long deadlineMs) {
    return admin.awaitEmpty(group, deadlineMs).compose(empty -> empty ? Future.succeededFuture()
        : Future.failedFuture(unavailable("Workers still belong to the consumer's share group after " + EMPTY_WAIT_MS / 1000
            + " s; nothing moved. Call events_seek again.")));
  }
}
