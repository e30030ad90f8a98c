package dev.tidemark.contract;

/**
 * Maps a PostgreSQL SQLSTATE to Tidemark's error code. Classifying by code, never by message,
 * keeps the mapping stable across server versions and locales.
 */
public final class SqlStates {

  private SqlStates() {}

  /**
   * What a data exception (class 22) means, without the value PostgreSQL's own message would
   * quote, and without the SQLSTATE, which the message that uses it names once.
   */
  public static String describeDataException(String sqlState) {
    String what = switch (sqlState == null ? "" : sqlState) {
      case "22P02" -> "a value is not valid text for its type";
      case "22003" -> "a number is out of its type's range";
      case "22007", "22008" -> "a date or time is not valid";
      case "22001" -> "a string is longer than its column allows";
      case "22012" -> "a division by zero";
      case "22023" -> "a parameter value is not valid";
      case "22004" -> "a null value where none is allowed";
      default -> "a value does not fit its type";
    };
    return what;
  }

  public static ErrorCode classify(String sqlState) {
    if (sqlState == null || sqlState.length() != 5) {
      return ErrorCode.INTERNAL;
    }
    switch (sqlState) {
      case "42501": return ErrorCode.PERMISSION_DENIED;      // insufficient_privilege
      case "57014": return ErrorCode.TIMEOUT;                // query_canceled (statement_timeout)
      case "25006": return ErrorCode.READ_ONLY;              // read_only_sql_transaction
      case "40001", "40P01": return ErrorCode.CONFLICT;      // serialization_failure, deadlock_detected
      case "42P01", "42703", "42883", "3F000": return ErrorCode.NOT_FOUND; // undefined table/column/function/schema
      case "55P03": return ErrorCode.CONFLICT;               // lock_not_available
      default: break;
    }
    return switch (sqlState.substring(0, 2)) {
      case "23" -> ErrorCode.CONSTRAINT_VIOLATION;           // integrity constraint violation
      case "22", "42" -> ErrorCode.INVALID_ARGUMENTS;        // data exception, syntax error or access rule
      case "08", "53", "57" -> ErrorCode.UNAVAILABLE;        // connection, resources, operator intervention
      default -> ErrorCode.INTERNAL;
    };
  }
}
