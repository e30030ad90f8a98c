package dev.tidemark.database;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

/**
 * Rows of {@code tidemark.proposal} (changes waiting for a person's approval), read as Tidemark's
 * login: by the command role and {@code tidemark proposals}, which decide on them, and by
 * {@code status}, which shows a proposer its own.
 */
public final class ProposalRows {

  /** The columns {@link #json} reads, of {@code tidemark.proposal p}. */
  public static final String COLUMNS = """
      p.id, p.caller_id, p.caller_name, p.pg_role, p.tool, p.arguments, p.idempotency_key, p.fingerprint, p.tables, p.plan,
      p.status, p.created_at, p.decided_at, p.decided_by, p.reason, p.outcome""";

  public static final String SELECT = "SELECT " + COLUMNS + " FROM tidemark.proposal p";

  /**
   * The rows a proposal writes, as people are shown them, and the hash of their images: read
   * beside {@link #COLUMNS} only where a person decides (they may be many).
   */
  public static final String ROW_COLUMNS = "p.row_images, p.images_hash";

  private ProposalRows() {}

  /** Every column of a row of {@link #SELECT}, for the people who decide. */
  public static JsonObject json(Row r) {
    JsonObject p = new JsonObject().put("proposal_id", r.getString("id")).put("status", r.getString("status"))
        .put("caller", r.getString("caller_name")).put("caller_id", r.getString("caller_id")).put("role", r.getString("pg_role"))
        .put("tool", r.getString("tool")).put("arguments", new JsonObject(r.getString("arguments")))
        .put("idempotency_key", r.getString("idempotency_key")).put("fingerprint", r.getString("fingerprint"))
        .put("tables", new JsonArray(java.util.List.of((Object[]) r.getArrayOfStrings("tables")))).put("plan", r.getValue("plan"))
        .put("created_at", r.getOffsetDateTime("created_at").toString());
    if (r.getOffsetDateTime("decided_at") != null) {
      p.put("decided_at", r.getOffsetDateTime("decided_at").toString()).put("decided_by", r.getString("decided_by"));
    }
    if (r.getString("reason") != null) {
      p.put("reason", r.getString("reason"));
    }
    if (r.getValue("outcome") != null) {
      p.put("outcome", r.getValue("outcome"));
    }
    if (r.getColumnIndex("row_images") >= 0 && r.getValue("row_images") != null) {
      p.put("rows", r.getValue("row_images"));
    }
    return p;
  }

  /** What its proposer is shown of a proposal ({@link #json}): its state, not its plan or arguments; the outcome as its summary. */
  public static JsonObject forProposer(JsonObject proposal) {
    JsonObject out = new JsonObject();
    for (String field : new String[] {"proposal_id", "status", "tool", "tables", "created_at", "decided_at", "decided_by", "reason"}) {
      if (proposal.containsKey(field)) {
        out.put(field, proposal.getValue(field));
      }
    }
    if (proposal.getValue("outcome") instanceof JsonObject outcome && outcome.getString("summary") != null) {
      out.put("outcome", outcome.getString("summary"));
    }
    return out;
  }
}
