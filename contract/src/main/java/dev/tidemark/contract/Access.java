package dev.tidemark.contract;

/** The ceiling Tidemark puts on a caller, on top of PostgreSQL's own grants. */
public enum Access {
  READ_WRITE("read-write"),
  READ_ONLY("read-only");

  private final String wire;

  Access(String wire) {
    this.wire = wire;
  }

  public String wire() {
    return wire;
  }

  public static Access fromWire(String value) {
    for (Access a : values()) {
      if (a.wire.equals(value)) {
        return a;
      }
    }
    throw new IllegalArgumentException("unknown access '" + value + "', expected read-write or read-only");
  }
}
