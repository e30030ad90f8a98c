package dev.tidemark.node.doctor;

/** The outcome of one check: one line of {@code tidemark doctor}'s output. */
public record Finding(Status status, String check, String message) {

  public enum Status {
    OK("ok  "), WARN("warn"), FAIL("FAIL"), SKIP("skip");

    private final String word;

    Status(String word) {
      this.word = word;
    }
  }

  static Finding ok(String check, String message) {
    return new Finding(Status.OK, check, message);
  }

  static Finding warn(String check, String message) {
    return new Finding(Status.WARN, check, message);
  }

  static Finding fail(String check, String message) {
    return new Finding(Status.FAIL, check, message);
  }

  static Finding skip(String check, String message) {
    return new Finding(Status.SKIP, check, message);
  }

  public String line() {
    return status.word + " " + check + ": " + message;
  }
}
