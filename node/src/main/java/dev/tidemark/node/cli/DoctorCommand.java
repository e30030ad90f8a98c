package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.node.doctor.Doctor;
import dev.tidemark.node.doctor.Finding;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tidemark doctor}: checks what a node needs, one line per check, and exits 0 only when none fails. */
@Command(name = "doctor", mixinStandardHelpOptions = true,
    description = "Checks the config, PostgreSQL, Kafka, the cluster and OAuth; prints one line per check with what to fix.")
final class DoctorCommand implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @CommandLine.Mixin
  NodeOptions node;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    TidemarkConfig cfg;
    try {
      cfg = node.load(spec);
    } catch (IllegalArgumentException e) {
      out.println(new Finding(Finding.Status.FAIL, "config", e.getMessage()).line());
      out.println("tidemark doctor: the config is not valid; nothing else was checked");
      out.flush();
      return 1;
    }
    out.println(new Finding(Finding.Status.OK, "config", (node.config == null ? "the environment is" : node.config + " and the environment are")
        + " valid; roles " + cfg.roles()).line());
    out.flush();
    List<Finding> findings = new Doctor(cfg).run();
    findings.forEach(f -> out.println(f.line()));
    long failed = findings.stream().filter(f -> f.status() == Finding.Status.FAIL).count();
    out.println(failed == 0 ? "tidemark doctor: no check failed" : "tidemark doctor: " + failed + " check(s) failed");
    out.flush();
    return failed == 0 ? 0 : 1;
  }
}
