package dev.tidemark.query.impl;

import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/** The values of a statement built piece by piece: each {@link #add} returns its placeholder. */
public final class SqlParams {

  private final List<Object> values = new ArrayList<>();

  /** Binds {@code value} and returns its placeholder, $1, $2, ... */
  public String add(Object value) {
    values.add(value);
    return "$" + values.size();
  }

  public List<Object> values() {
    return List.copyOf(values);
  }

  public Tuple tuple() {
    Tuple t = Tuple.tuple();
    values.forEach(t::addValue);
    return t;
  }
}
