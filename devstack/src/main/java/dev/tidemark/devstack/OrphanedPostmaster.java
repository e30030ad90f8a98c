package dev.tidemark.devstack;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The PostgreSQL server a killed process left running on a kept data folder. The postmaster runs
 * as a daemon, so when the JVM that started it is killed (kill -9, a crash) it goes on, holding
 * the folder's lock ({@code postmaster.pid}), and the next start on that folder fails. Before a
 * start, such a server is stopped, but only when it is certainly a postgres of this very folder:
 * the pid file names the folder, the process is alive, its program is {@code postgres}, and it
 * runs in that folder (a postmaster changes into its data folder) or names it on its command line.
 */
public final class OrphanedPostmaster {

  /** A fast shutdown (SIGINT) rolls back open transactions and ends every backend; it takes a few seconds at most. */
  private static final long STOP_SECONDS = 30;

  private OrphanedPostmaster() {}

  /**
   * Stops the server left running on {@code dataDir}, if there is one, and waits for it to exit.
   * Returns its pid when it stopped one.
   *
   * @throws IllegalStateException when such a server is running and does not stop
   */
  public static Optional<Long> stopIfRunning(Path dataDir) {
    Optional<ProcessHandle> orphan = find(dataDir);
    if (orphan.isEmpty()) {
      return Optional.empty();
    }
    ProcessHandle postmaster = orphan.get();
    signalFastShutdown(postmaster);
    try {
      postmaster.onExit().get(STOP_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping PostgreSQL (pid " + postmaster.pid() + ")", e);
    } catch (Exception e) {
      throw new IllegalStateException("the PostgreSQL server (pid " + postmaster.pid() + ") that a previous run left on " + dataDir
          + " did not stop within " + STOP_SECONDS + " s; stop it (kill " + postmaster.pid() + ") and start again", e);
    }
    return Optional.of(postmaster.pid());
  }

  /** The live postmaster of {@code dataDir} named by its pid file; empty when none runs, or when it cannot be told apart. */
  static Optional<ProcessHandle> find(Path dataDir) {
    List<String> lines;
    try {
      lines = Files.readAllLines(dataDir.resolve("postmaster.pid"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return Optional.empty();
    }
    if (lines.size() < 2) {
      return Optional.empty();
    }
    long pid;
    try {
      pid = Long.parseLong(lines.get(0).trim());
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
    if (pid == ProcessHandle.current().pid() || !sameFolder(Path.of(lines.get(1).trim()), dataDir)) {
      return Optional.empty();
    }
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(p -> isPostgresOf(p, dataDir));
  }

  private static boolean isPostgresOf(ProcessHandle process, Path dataDir) {
    ProcessHandle.Info info = process.info();
    boolean postgres = info.command().map(c -> Path.of(c).getFileName().toString().equals("postgres")).orElse(false);
    if (!postgres) {
      return false;
    }
    Path cwd = Path.of("/proc", String.valueOf(process.pid()), "cwd");
    if (Files.exists(cwd) && sameFolder(cwd, dataDir)) {
      return true;
    }
    String folder = dataDir.toAbsolutePath().normalize().toString();
    return info.arguments().map(args -> List.of(args).contains(folder)).orElse(false);
  }

  private static boolean sameFolder(Path a, Path b) {
    try {
      return Files.isSameFile(a, b);
    } catch (IOException e) {
      return false;
    }
  }

  /** SIGINT is PostgreSQL's fast shutdown; SIGTERM (all the JDK can send) would wait for every client to leave. */
  private static void signalFastShutdown(ProcessHandle postmaster) {
    try {
      Process kill = new ProcessBuilder("kill", "-INT", String.valueOf(postmaster.pid())).redirectErrorStream(true).start();
      kill.getInputStream().readAllBytes();
      if (kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0) {
        return;
      }
    } catch (IOException e) {
      // no kill command: fall back to SIGTERM below
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    postmaster.destroy();
  }
}
