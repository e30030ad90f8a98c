package dev.tidemark.contract;

/** Tidemark's version, read from the jar manifest or, in a source tree, from version.properties. */
public final class Version {

  private static final String VERSION = load();

  private Version() {}

  public static String get() {
    return VERSION;
  }

  private static String load() {
    try (var in = Version.class.getResourceAsStream("/dev/tidemark/contract/version.properties")) {
      if (in != null) {
        var p = new java.util.Properties();
        p.load(in);
        return p.getProperty("version", "unknown");
      }
    } catch (java.io.IOException ignored) {
      // fall through: a build without the resource still runs
    }
    return "unknown";
  }
}
