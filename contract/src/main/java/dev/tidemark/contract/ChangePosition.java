package dev.tidemark.contract;

/**
 * Where a change sits in a database's changelog: its commit's position (taken at commit, so in
 * commit order) and the change's id (in statement order within the commit). Both come from
 * PostgreSQL, so the order survives restarts and is the same on every node.
 *
 * <p>Clients only ever see it as an opaque cursor, signed with the database's key ring
 * ({@code ChangeCursor} in module {@code keys}).
 */
public record ChangePosition(long commit, long change) implements Comparable<ChangePosition> {

  /** Before every change. */
  public static final ChangePosition START = new ChangePosition(0, 0);

  @Override
  public int compareTo(ChangePosition o) {
    int c = Long.compare(commit, o.commit);
    return c != 0 ? c : Long.compare(change, o.change);
  }

  public boolean isAfter(ChangePosition o) {
    return compareTo(o) > 0;
  }
}
