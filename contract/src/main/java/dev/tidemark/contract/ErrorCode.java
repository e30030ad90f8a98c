package dev.tidemark.contract;

/**
 * Every error a caller can see, with a stable string code. Values are only ever appended; a code's
 * string and meaning never change. Each constant spells its string out, so that renaming a
 * constant can never change the wire. {@code retriable} says whether the same call may succeed if
 * sent again unchanged.
 */
public enum ErrorCode {
  INVALID_ARGUMENTS("INVALID_ARGUMENTS", false, "Fix the arguments named above and call again."),
  NOT_FOUND("NOT_FOUND", false, "Check the name with list_tables or describe_table."),
  PERMISSION_DENIED("PERMISSION_DENIED", false, "Your role lacks a privilege this needs; use list_tables to see what you may read, and work within it."),
  READ_ONLY("READ_ONLY", false, "This call may only read; use a change tool to write."),
  TIMEOUT("TIMEOUT", true, "The statement ran past its time limit; narrow the request: add a filter or a limit, or page with a cursor."),
  LIMIT_EXCEEDED("LIMIT_EXCEEDED", false, "Ask for less, or page through the result."),
  UNAVAILABLE("UNAVAILABLE", true, "The service that runs this tool is not reachable right now; retry shortly."),
  CURSOR_STALE("CURSOR_STALE", false, "The data changed since the first page; start again without a cursor."),
  CURSOR_EXPIRED("CURSOR_EXPIRED", false, "The cursor is too old; start again from the head reported by status."),
  INVALID_CURSOR("INVALID_CURSOR", false, "The cursor was not issued for this call; start again without one."),
  INVALID_PLAN("INVALID_PLAN", false, "Plan the change again and commit with the new plan_id."),
  PLAN_CHANGED("PLAN_CHANGED", false, "The rows changed since the plan; plan the change again."),
  DECISION_REQUIRED("DECISION_REQUIRED", false, "The change removes data and needs the user's consent."),
  IDEMPOTENCY_CONFLICT("IDEMPOTENCY_CONFLICT", false, "This idempotency_key was used with other input; use a new key."),
  CONSTRAINT_VIOLATION("CONSTRAINT_VIOLATION", false, "The change breaks a constraint of the table; fix the values."),
  CONFLICT("CONFLICT", true, "A concurrent change conflicted with this one; retry."),
  TRANSACTION_STATEMENT("TRANSACTION_STATEMENT", false, "Transaction control is not allowed here; Tidemark manages the transaction."),
  LEASE_EXPIRED("LEASE_EXPIRED", false, "The lease ran out; lease the events again."),
  INTERNAL("INTERNAL", true, "Tidemark failed unexpectedly; retry, and report it if it persists."),
  INVALID_LEASE("INVALID_LEASE", false, "Pass the lease_token that events_next returned with these events, for this consumer."),
  PROPOSAL_STALE("PROPOSAL_STALE", false, "What the proposal showed is no longer what it would write; plan the change again and propose it with a new idempotency_key."),
  PROPOSAL_VOID("PROPOSAL_VOID", false, "The proposer may no longer make this change, so its proposal is void; nothing was written."),
  PROPOSAL_REJECTED("PROPOSAL_REJECTED", false, "A person rejected the proposal and nothing was written; read the reason, and propose a different change only if one is still needed."),
  SIGN_IN_REQUIRED("SIGN_IN_REQUIRED", false, "Sign in to the console again: the sign-in expired, was ended, or its token was revoked."),
  FORM_REFUSED("FORM_REFUSED", false, "Open the page again and send the form from there: a console form is sent once, by the sign-in that opened it, within an hour."),
  BEFORE_IMAGE_MISSING("BEFORE_IMAGE_MISSING", false, "The changelog holds only the key of the rows this would put back; restore them by hand, and remove their table from database.key-only-tables so that later changes keep whole rows."),
  TABLE_UNPLANNED("TABLE_UNPLANNED", false, "Change tools do not change the tables named above (database.unplanned-tables); change them another way, or ask the operator to remove them from database.unplanned-tables.");

  private final String code;
  private final boolean retriable;
  private final String hint;

  ErrorCode(String code, boolean retriable, String hint) {
    this.code = code;
    this.retriable = retriable;
    this.hint = hint;
  }

  public boolean retriable() {
    return retriable;
  }

  /** What the caller should do next; appended to messages that do not say so themselves. */
  public String hint() {
    return hint;
  }

  /** The code written on the wire as {@code code}, if it is one of these. */
  public static java.util.Optional<ErrorCode> of(Object code) {
    for (ErrorCode known : values()) {
      if (known.code.equals(code)) {
        return java.util.Optional.of(known);
      }
    }
    return java.util.Optional.empty();
  }

  /** The stable string written on the wire; pinned apart from the constant's name, so a rename never changes it. */
  public String code() {
    return code;
  }
}
