package dev.tidemark.query.impl;

import dev.tidemark.contract.ChangePosition;
import dev.tidemark.keys.ChangeCursor;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import java.nio.charset.StandardCharsets;

/**
 * Reads Tidemark's changelog as the login (callers have no rights on schema tidemark): the head
 * and the retention horizon. Cursors are signed with the database's key ring.
 */
final class Changelog {

  /** The newest change's position, or the retention horizon when every change was pruned. */
  static final String HEAD = """
      SELECT s.pruned_commit, s.pruned_change,
             (SELECT k.position FROM tidemark.changelog_commit k ORDER BY k.position DESC LIMIT 1) AS head_commit,
             (SELECT max(c.id) FROM tidemark.changelog c
                JOIN tidemark.changelog_commit k ON c.xid = k.xid
               WHERE k.position = (SELECT max(position) FROM tidemark.changelog_commit)) AS head_change
        FROM tidemark.changelog_state s""";

  record Bounds(ChangePosition head, ChangePosition pruned) {}

  /** Head and horizon, read in one statement so that they agree. */
  static Future<Bounds> bounds(SqlClient client) {
    return client.query(HEAD).execute().map(rows -> {
      Row r = rows.iterator().next();
      ChangePosition pruned = new ChangePosition(r.getLong("pruned_commit"), r.getLong("pruned_change"));
      Long commit = r.getLong("head_commit");
      ChangePosition head = commit == null ? pruned : new ChangePosition(commit, r.getLong("head_change"));
      return new Bounds(head.isAfter(pruned) ? head : pruned, pruned);
    });
  }

  /** The head as an opaque cursor, signed with the key ring. */
  static Future<String> headCursor(Pool pool, KeyRing keys) {
    return bounds(pool).map(b -> ChangeCursor.encode(b.head(), keys));
  }
}
