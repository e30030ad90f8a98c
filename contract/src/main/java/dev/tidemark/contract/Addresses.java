package dev.tidemark.contract;

/**
 * Event-bus addresses, declared once. Every address is versioned and names the database it serves,
 * so that one cluster can serve several databases without a new seam.
 */
public final class Addresses {

  /** Read tools of one database: {@code tidemark.query.v1.<database>}. */
  public static final String QUERY_V1 = "tidemark.query.v1";
  /** Change tools of one database: {@code tidemark.command.v1.<database>}. */
  public static final String COMMAND_V1 = "tidemark.command.v1";
  /** The changelog role of one database: {@code tidemark.changelog.v1.<database>}. */
  public static final String CHANGELOG_V1 = "tidemark.changelog.v1";

  /**
   * Committed data changes of one database, published by every gateway node to its own local
   * consumers only: {@code tidemark.changes.v1.<database>}. Body: {@link ChangeNotice}.
   */
  public static final String CHANGES_V1 = "tidemark.changes.v1";
  /**
   * Committed schema changes (DDL) of one database, local to each gateway node:
   * {@code tidemark.schema-changes.v1.<database>}. Body: {@link SchemaChangeNotice}.
   */
  public static final String SCHEMA_CHANGES_V1 = "tidemark.schema-changes.v1";

  /**
   * Cancellations of running tool calls, published to every service node of one database:
   * {@code tidemark.cancel.v1.<database>}. Body: {@code {"request_id": "<ToolRequest.requestId>"}}.
   */
  public static final String CANCEL_V1 = "tidemark.cancel.v1";

  /**
   * Published by the gateway that changed or ended a session, with its id as {@code {"id": ...}}:
   * every gateway drops its copy of that session.
   */
  public static final String SESSION_CHANGED_V1 = "tidemark.session-changed.v1";

  /** Message header that names what a request asks for. */
  public static final String ACTION_HEADER = "action";

  private Addresses() {}

  public static String query(String database) {
    return QUERY_V1 + "." + database;
  }

  public static String command(String database) {
    return COMMAND_V1 + "." + database;
  }

  public static String changelog(String database) {
    return CHANGELOG_V1 + "." + database;
  }

  public static String changes(String database) {
    return CHANGES_V1 + "." + database;
  }

  public static String schemaChanges(String database) {
    return SCHEMA_CHANGES_V1 + "." + database;
  }

  public static String cancel(String database) {
    return CANCEL_V1 + "." + database;
  }

  public static String forService(Service service, String database) {
    return switch (service) {
      case QUERY -> query(database);
      case COMMAND -> command(database);
      case CHANGELOG -> changelog(database);
    };
  }
}
