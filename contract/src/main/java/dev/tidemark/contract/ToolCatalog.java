package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Every production tool, in the order {@code tools/list} shows them. */
public final class ToolCatalog {

  public static final String STATUS = "status";
  public static final String LIST_TABLES = "list_tables";
  public static final String DESCRIBE_TABLE = "describe_table";
  public static final String GET_ROW = "get_row";
  public static final String LIST_ROWS = "list_rows";
  public static final String QUERY = "query";
  public static final String EXPLAIN = "explain";
  public static final String CHANGES_SINCE = "changes_since";
  public static final String WATCH = "watch";
  public static final String INSERT_ROWS = "insert_rows";
  public static final String UPDATE_ROWS = "update_rows";
  public static final String DELETE_ROWS = "delete_rows";
  public static final String EXECUTE = "execute";
  public static final String TRANSACTION = "transaction";
  public static final String RESTORE_ROWS = "restore_rows";
  public static final String UNDO_TRANSACTION = "undo_transaction";
  /** Shown only to callers whose role is in command.migrate-roles. */
  public static final String MIGRATE = "migrate";
  public static final String EVENTS_NEXT = "events_next";
  public static final String EVENTS_ACK = "events_ack";
  public static final String EVENTS_NACK = "events_nack";
  public static final String EVENTS_STATUS = "events_status";
  public static final String EVENTS_SEEK = "events_seek";

  private static final List<String> NAMES =
      List.of(STATUS, LIST_TABLES, DESCRIBE_TABLE, GET_ROW, LIST_ROWS, QUERY, EXPLAIN, CHANGES_SINCE, WATCH,
          INSERT_ROWS, UPDATE_ROWS, DELETE_ROWS, EXECUTE, TRANSACTION, RESTORE_ROWS, UNDO_TRANSACTION, MIGRATE,
          EVENTS_NEXT, EVENTS_ACK, EVENTS_NACK, EVENTS_STATUS, EVENTS_SEEK);
  private static final Map<String, ToolDescriptor> TOOLS = load();

  private ToolCatalog() {}

  public static List<ToolDescriptor> all() {
    return List.copyOf(TOOLS.values());
  }

  public static Optional<ToolDescriptor> find(String name) {
    return Optional.ofNullable(TOOLS.get(name));
  }

  private static Map<String, ToolDescriptor> load() {
    Map<String, ToolDescriptor> tools = new LinkedHashMap<>();
    for (String name : NAMES) {
      String path = "/dev/tidemark/contract/tools/" + name + ".json";
      try (InputStream in = ToolCatalog.class.getResourceAsStream(path)) {
        if (in == null) {
          throw new IllegalStateException("missing tool contract " + path);
        }
        ToolDescriptor tool = ToolDescriptor.fromJson(new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
        if (!tool.name().equals(name)) {
          throw new IllegalStateException(path + " declares tool " + tool.name());
        }
        tools.put(name, tool);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return tools;
  }
}
