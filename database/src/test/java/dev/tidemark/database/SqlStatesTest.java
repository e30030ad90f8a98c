package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import io.vertx.pgclient.PgException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SqlStatesTest {

  /** The whole table: each single condition, then one member of each class, then what no class claims. */
  private static final Map<String, ErrorCode> TABLE = Map.ofEntries(
      Map.entry(SqlStates.INSUFFICIENT_PRIVILEGE, ErrorCode.PERMISSION_DENIED),
      Map.entry(SqlStates.QUERY_CANCELED, ErrorCode.TIMEOUT),
      Map.entry(SqlStates.READ_ONLY_SQL_TRANSACTION, ErrorCode.READ_ONLY),
      Map.entry(SqlStates.SERIALIZATION_FAILURE, ErrorCode.CONFLICT),
      Map.entry(SqlStates.DEADLOCK_DETECTED, ErrorCode.CONFLICT),
      Map.entry(SqlStates.LOCK_NOT_AVAILABLE, ErrorCode.CONFLICT),
      Map.entry(SqlStates.UNDEFINED_TABLE, ErrorCode.NOT_FOUND),
      Map.entry(SqlStates.UNDEFINED_COLUMN, ErrorCode.NOT_FOUND),
      Map.entry(SqlStates.UNDEFINED_FUNCTION, ErrorCode.NOT_FOUND),
      Map.entry(SqlStates.INVALID_SCHEMA_NAME, ErrorCode.NOT_FOUND),
      Map.entry(SqlStates.UNIQUE_VIOLATION, ErrorCode.CONSTRAINT_VIOLATION),
      Map.entry(SqlStates.EXCLUSION_VIOLATION, ErrorCode.CONSTRAINT_VIOLATION),
      Map.entry(SqlStates.INVALID_TEXT_REPRESENTATION, ErrorCode.INVALID_ARGUMENTS),
      Map.entry(SqlStates.SYNTAX_ERROR, ErrorCode.INVALID_ARGUMENTS),
      Map.entry(SqlStates.UNDEFINED_OBJECT, ErrorCode.INVALID_ARGUMENTS),
      Map.entry(SqlStates.CONNECTION_FAILURE, ErrorCode.UNAVAILABLE),
      Map.entry(SqlStates.TOO_MANY_CONNECTIONS, ErrorCode.UNAVAILABLE),
      Map.entry(SqlStates.CANNOT_CONNECT_NOW, ErrorCode.UNAVAILABLE),
      Map.entry(SqlStates.OBJECT_IN_USE, ErrorCode.INTERNAL),
      Map.entry(SqlStates.FEATURE_NOT_SUPPORTED, ErrorCode.INTERNAL),
      Map.entry("XX000", ErrorCode.INTERNAL));

  @Test
  void everySqlStateOfTheTableHasItsErrorCode() {
    TABLE.forEach((state, code) -> assertEquals(code, SqlStates.classify(state), state));
  }

  @Test
  void aMissingOrMalformedSqlStateIsInternal() {
    assertEquals(ErrorCode.INTERNAL, SqlStates.classify(null));
    assertEquals(ErrorCode.INTERNAL, SqlStates.classify("42"));
  }

  @Test
  void onlySerializationFailuresAndDeadlocksAreRetriable() {
    assertTrue(SqlStates.retriable(refused(SqlStates.SERIALIZATION_FAILURE)));
    assertTrue(SqlStates.retriable(refused(SqlStates.DEADLOCK_DETECTED)));
    assertFalse(SqlStates.retriable(refused(SqlStates.LOCK_NOT_AVAILABLE)));
    assertFalse(SqlStates.retriable(new RuntimeException(SqlStates.SERIALIZATION_FAILURE)));
  }

  @Test
  void aFailureIsMatchedByItsSqlStateOrClassAndNeverByItsText() {
    Throwable unique = refused(SqlStates.UNIQUE_VIOLATION);
    assertEquals(SqlStates.UNIQUE_VIOLATION, SqlStates.of(unique));
    assertTrue(SqlStates.is(unique, SqlStates.DUPLICATE_OBJECT, SqlStates.UNIQUE_VIOLATION));
    assertFalse(SqlStates.is(unique, SqlStates.DUPLICATE_OBJECT));
    assertTrue(SqlStates.inClass(unique, SqlStates.INTEGRITY_CONSTRAINT_VIOLATION));
    assertFalse(SqlStates.inClass(unique, SqlStates.DATA_EXCEPTION));
    Throwable other = new IllegalStateException("ERROR: duplicate key value (SQLSTATE 23505)");
    assertNull(SqlStates.of(other));
    assertFalse(SqlStates.is(other, SqlStates.UNIQUE_VIOLATION));
    assertFalse(SqlStates.inClass(other, SqlStates.INTEGRITY_CONSTRAINT_VIOLATION));
  }

  @Test
  void aServerStartingStoppingOrFullIsNotYetServing() {
    for (String state : new String[] {SqlStates.CANNOT_CONNECT_NOW, SqlStates.TOO_MANY_CONNECTIONS, SqlStates.ADMIN_SHUTDOWN,
        SqlStates.CONNECTION_FAILURE, SqlStates.SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION}) {
      assertTrue(SqlStates.notYetServing(refused(state)), state);
    }
    assertFalse(SqlStates.notYetServing(refused(SqlStates.INVALID_PASSWORD)));
  }

  @Test
  void constraintKindsAndDataExceptionsAreWordedWithoutValues() {
    assertEquals("unique", SqlStates.constraintKind(SqlStates.UNIQUE_VIOLATION));
    assertEquals("foreign-key", SqlStates.constraintKind(SqlStates.FOREIGN_KEY_VIOLATION));
    assertEquals("check", SqlStates.constraintKind(SqlStates.CHECK_VIOLATION));
    assertEquals("not-null", SqlStates.constraintKind(SqlStates.NOT_NULL_VIOLATION));
    assertEquals("exclusion", SqlStates.constraintKind(SqlStates.EXCLUSION_VIOLATION));
    assertEquals("integrity", SqlStates.constraintKind("23000"));
    assertEquals("a number is out of its type's range", SqlStates.describeDataException(SqlStates.NUMERIC_VALUE_OUT_OF_RANGE));
    assertEquals("a value does not fit its type", SqlStates.describeDataException(null));
  }

  private static PgException refused(String sqlState) {
    return new PgException("refused", "ERROR", sqlState, null);
  }
}
