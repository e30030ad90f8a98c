package dev.tidemark.node.shipped;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the operating system's packages (Debian's {@code postgresql}), as an operator's would be:
 * started by {@code pg_ctl} as the {@code postgres} user, with {@code fsync} on and password (SCRAM) authentication,
 * and {@code wal_level = logical}. Written as shell for a test script that runs in namespaces of its own.
 */
final class PostgresServer {

  private PostgresServer() {}

  /** The newest server's binaries under /usr/lib/postgresql; fails with what to install when there are none. */
  static Path binaries() {
    Path base = Path.of("/usr/lib/postgresql");
    try (Stream<Path> versions = Files.isDirectory(base) ? Files.list(base) : Stream.empty()) {
      return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
          .max(Comparator.comparing(b -> Integer.parseInt(b.getParent().getFileName().toString().replaceAll("\\D", "0"))))
          .orElseThrow(() -> new IllegalStateException("no PostgreSQL server binaries under /usr/lib/postgresql: install them"
              + " (Debian: apt-get install postgresql); .ci/run does"));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Shell that makes a new cluster in {@code dir}, starts it on 127.0.0.1:{@code port}, creates {@code database}, and
   * prints {@code fsync=on} once the running server says so.
   */
  static String startScript(Path dir, int port, String superuserPassword, String database) {
    Path bin = binaries();
    return String.join("\n",
        "# the operator's PostgreSQL server (the test's setup, not the guide's)",
        "ip link set lo up",
        "install -d -o postgres -m 700 " + dir,
        "printf %s '" + superuserPassword + "' > " + dir + "/pw && chown postgres " + dir + "/pw",
        "runuser -u postgres -- " + bin + "/initdb -D " + dir + "/data -A scram-sha-256 -U postgres --pwfile=" + dir + "/pw >/dev/null",
        "runuser -u postgres -- " + bin + "/pg_ctl -D " + dir + "/data -l " + dir + "/server.log -w -o \"-c listen_addresses=127.0.0.1"
            + " -p " + port + " -c unix_socket_directories=" + dir + " -c wal_level=logical -c fsync=on -c synchronous_commit=on\" start"
            + " >/dev/null",
        "echo \"fsync=$(PGPASSWORD='" + superuserPassword + "' psql -h 127.0.0.1 -p " + port
            + " -U postgres -d postgres -Atc 'SHOW fsync')\"",
        "PGPASSWORD='" + superuserPassword + "' psql -h 127.0.0.1 -p " + port + " -U postgres -d postgres -qc 'CREATE DATABASE "
            + database + "'",
        "");
  }
}
