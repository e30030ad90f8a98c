package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The wire strings of the error codes: what clients match on, so none may change or move. */
class ErrorCodeTest {

  /** Every code ever put on the wire, in declaration order; a new code is appended here and to errors.md. */
  private static final List<String> WIRE = List.of("INVALID_ARGUMENTS", "NOT_FOUND", "PERMISSION_DENIED", "READ_ONLY", "TIMEOUT",
      "LIMIT_EXCEEDED", "UNAVAILABLE", "CURSOR_STALE", "CURSOR_EXPIRED", "INVALID_CURSOR", "INVALID_PLAN", "PLAN_CHANGED",
      "DECISION_REQUIRED", "IDEMPOTENCY_CONFLICT", "CONSTRAINT_VIOLATION", "CONFLICT", "TRANSACTION_STATEMENT", "LEASE_EXPIRED",
      "INTERNAL", "INVALID_LEASE", "PROPOSAL_STALE", "PROPOSAL_VOID", "PROPOSAL_REJECTED", "SIGN_IN_REQUIRED", "FORM_REFUSED",
      "BEFORE_IMAGE_MISSING", "TABLE_UNPLANNED");

  private static final Pattern TABLE_ROW = Pattern.compile("^\\| `([A-Z_]+)` \\|");

  private static List<String> wireStrings() {
    return Arrays.stream(ErrorCode.values()).map(ErrorCode::code).toList();
  }

  @Test
  void theWireStringsAreExactlyThePinnedListInOrder() {
    assertEquals(WIRE, wireStrings());
  }

  @Test
  void everyCodeHasAHint() {
    for (ErrorCode code : ErrorCode.values()) {
      assertFalse(code.hint().isBlank(), code.code());
    }
  }

  @Test
  void theErrorsReferenceListsEveryWireStringInTheSameOrder() throws IOException {
    // Maven runs a module's tests from the module's folder
    List<String> lines = Files.readAllLines(Path.of("..", "docs", "reference", "errors.md"));
    int start = lines.indexOf("### Error codes");
    List<String> documented = new ArrayList<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("#")) {
        break;
      }
      Matcher m = TABLE_ROW.matcher(line);
      if (m.find()) {
        documented.add(m.group(1));
      }
    }
    assertEquals(wireStrings(), documented);
  }
}
