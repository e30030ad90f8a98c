package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import io.vertx.pgclient.PgException;
import java.util.Set;

/**
 * The one classification of PostgreSQL's failures, by SQLSTATE and never by message text, which
 * changes with the server's version and locale: the SQLSTATEs Tidemark tells apart, named once as
 * PostgreSQL's appendix names them, what each means to a caller ({@link #classify}), and the tests
 * every module asks of a failure ({@link #is}, {@link #inClass}, {@link #retriable}).
 */
public final class SqlStates {

  // ---- classes: the first two characters ----
  public static final String DATA_EXCEPTION = "22";
  public static final String INTEGRITY_CONSTRAINT_VIOLATION = "23";
  public static final String TRANSACTION_ROLLBACK = "40";
  public static final String SYNTAX_ERROR_OR_ACCESS_RULE = "42";

  // ---- single conditions ----
  public static final String FEATURE_NOT_SUPPORTED = "0A000";
  public static final String SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION = "08001";
  public static final String CONNECTION_FAILURE = "08006";
  public static final String NULL_VALUE_NOT_ALLOWED = "22004";
  public static final String STRING_DATA_RIGHT_TRUNCATION = "22001";
  public static final String NUMERIC_VALUE_OUT_OF_RANGE = "22003";
  public static final String INVALID_DATETIME_FORMAT = "22007";
  public static final String DATETIME_FIELD_OVERFLOW = "22008";
  public static final String DIVISION_BY_ZERO = "22012";
  public static final String INVALID_PARAMETER_VALUE = "22023";
  public static final String INVALID_TEXT_REPRESENTATION = "22P02";
  public static final String NOT_NULL_VIOLATION = "23502";
  public static final String FOREIGN_KEY_VIOLATION = "23503";
  public static final String UNIQUE_VIOLATION = "23505";
  public static final String CHECK_VIOLATION = "23514";
  public static final String EXCLUSION_VIOLATION = "23P01";
  public static final String READ_ONLY_SQL_TRANSACTION = "25006";
  public static final String INVALID_SQL_STATEMENT_NAME = "26000";
  public static final String INVALID_AUTHORIZATION_SPECIFICATION = "28000";
  public static final String INVALID_PASSWORD = "28P01";
  public static final String INVALID_CATALOG_NAME = "3D000";
  public static final String INVALID_SCHEMA_NAME = "3F000";
  public static final String SERIALIZATION_FAILURE = "40001";
  public static final String DEADLOCK_DETECTED = "40P01";
  public static final String SYNTAX_ERROR = "42601";
  public static final String INSUFFICIENT_PRIVILEGE = "42501";
  public static final String UNDEFINED_COLUMN = "42703";
  public static final String UNDEFINED_OBJECT = "42704";
  public static final String DATATYPE_MISMATCH = "42804";
  public static final String CANNOT_COERCE = "42846";
  public static final String UNDEFINED_FUNCTION = "42883";
  public static final String UNDEFINED_TABLE = "42P01";
  public static final String DUPLICATE_OBJECT = "42710";
  public static final String DUPLICATE_SCHEMA = "42P06";
  public static final String TOO_MANY_CONNECTIONS = "53300";
  public static final String OBJECT_IN_USE = "55006";
  public static final String LOCK_NOT_AVAILABLE = "55P03";
  public static final String QUERY_CANCELED = "57014";
  public static final String ADMIN_SHUTDOWN = "57P01";
  public static final String CANNOT_CONNECT_NOW = "57P03";

  /** A server that is starting, stopping or full: asked again shortly, it may take the connection. */
  private static final Set<String> NOT_YET_SERVING = Set.of(CANNOT_CONNECT_NOW, TOO_MANY_CONNECTIONS, ADMIN_SHUTDOWN,
      CONNECTION_FAILURE, SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION);

  private SqlStates() {}

  /** The SQLSTATE {@code err} carries when PostgreSQL refused a statement; null for any other failure. */
  public static String of(Throwable err) {
    return err instanceof PgException pg ? pg.getSqlState() : null;
  }

  /** Whether PostgreSQL refused with one of {@code states}. */
  public static boolean is(Throwable err, String... states) {
    String state = of(err);
    if (state != null) {
      for (String s : states) {
        if (s.equals(state)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Whether PostgreSQL refused with a SQLSTATE of class {@code sqlClass} (its first two characters). */
  public static boolean inClass(Throwable err, String sqlClass) {
    return inClass(of(err), sqlClass);
  }

  /** Whether {@code sqlState} is of class {@code sqlClass}. */
  public static boolean inClass(String sqlState, String sqlClass) {
    return sqlState != null && sqlState.startsWith(sqlClass);
  }

  /** Serialization failures and deadlocks: a transaction that may succeed when it runs again. */
  public static boolean retriable(Throwable err) {
    return is(err, SERIALIZATION_FAILURE, DEADLOCK_DETECTED);
  }

  /** A login refused because the server is starting, stopping or has no connection to spare: worth asking again. */
  public static boolean notYetServing(Throwable err) {
    String state = of(err);
    return state != null && NOT_YET_SERVING.contains(state);
  }

  /** The kind of constraint an integrity violation (class 23) broke, in the words a message uses. */
  public static String constraintKind(String sqlState) {
    return switch (sqlState == null ? "" : sqlState) {
      case UNIQUE_VIOLATION -> "unique";
      case FOREIGN_KEY_VIOLATION -> "foreign-key";
      case CHECK_VIOLATION -> "check";
      case NOT_NULL_VIOLATION -> "not-null";
      case EXCLUSION_VIOLATION -> "exclusion";
      default -> "integrity";
    };
  }

  /**
   * What a data exception (class 22) means, without the value PostgreSQL's own message would
   * quote, and without the SQLSTATE, which the message that uses it names once.
   */
  public static String describeDataException(String sqlState) {
    return switch (sqlState == null ? "" : sqlState) {
      case INVALID_TEXT_REPRESENTATION -> "a value is not valid text for its type";
      case NUMERIC_VALUE_OUT_OF_RANGE -> "a number is out of its type's range";
      case INVALID_DATETIME_FORMAT, DATETIME_FIELD_OVERFLOW -> "a date or time is not valid";
      case STRING_DATA_RIGHT_TRUNCATION -> "a string is longer than its column allows";
      case DIVISION_BY_ZERO -> "a division by zero";
      case INVALID_PARAMETER_VALUE -> "a parameter value is not valid";
      case NULL_VALUE_NOT_ALLOWED -> "a null value where none is allowed";
      default -> "a value does not fit its type";
    };
  }

  /** The error code a caller gets for {@code sqlState}: single conditions first, then their class. */
  public static ErrorCode classify(String sqlState) {
    if (sqlState == null || sqlState.length() != 5) {
      return ErrorCode.INTERNAL;
    }
    switch (sqlState) {
      case INSUFFICIENT_PRIVILEGE: return ErrorCode.PERMISSION_DENIED;
      case QUERY_CANCELED: return ErrorCode.TIMEOUT;  // statement_timeout
      case READ_ONLY_SQL_TRANSACTION: return ErrorCode.READ_ONLY;
      case SERIALIZATION_FAILURE, DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE: return ErrorCode.CONFLICT;
      case UNDEFINED_TABLE, UNDEFINED_COLUMN, UNDEFINED_FUNCTION, INVALID_SCHEMA_NAME: return ErrorCode.NOT_FOUND;
      default: break;
    }
    return switch (sqlState.substring(0, 2)) {
      case INTEGRITY_CONSTRAINT_VIOLATION -> ErrorCode.CONSTRAINT_VIOLATION;
      case DATA_EXCEPTION, SYNTAX_ERROR_OR_ACCESS_RULE -> ErrorCode.INVALID_ARGUMENTS;
      case "08", "53", "57" -> ErrorCode.UNAVAILABLE;             // connection, resources, operator intervention
      default -> ErrorCode.INTERNAL;
    };
  }
}
