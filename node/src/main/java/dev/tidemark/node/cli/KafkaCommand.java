package dev.tidemark.node.cli;

import dev.tidemark.devstack.EmbeddedKafkaBroker;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tidemark kafka}: the single-node Kafka broker dev mode runs, on a port of the operator's choosing, for a trial
 * of a cluster on one machine. It has one replica of everything, no authentication and no TLS: a production cluster
 * runs Apache Kafka 4.2 or later of its own (docs/guides/run-without-kubernetes.md says where to get one).
 */
@Command(name = "kafka", mixinStandardHelpOptions = true,
    description = "Runs a single-node Kafka broker (KRaft, plaintext, one replica) for a trial on one machine; not for production.")
final class KafkaCommand implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--data-dir", paramLabel = "DIR", required = true,
      description = "Where the broker keeps its data between runs; created when missing.")
  Path dataDir;

  @Option(names = "--port", paramLabel = "N", defaultValue = "9092", description = "The port clients connect to (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--host", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
      description = "The address it listens on and gives clients (default: ${DEFAULT-VALUE}).")
  String host;

  @Override
  public Integer call() throws Exception {
    if (port < 1 || port > 65535) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--port: give a port from 1 to 65535");
    }
    EmbeddedKafkaBroker broker;
    try {
      broker = EmbeddedKafkaBroker.startOn(dataDir, host, port);
    } catch (RuntimeException e) {
      Throwable root = CommandSession.root(e);
      if (root instanceof java.net.BindException || String.valueOf(root.getMessage()).contains("Address already in use")) {
        throw new CommandFailure("cannot listen on " + host + ":" + port + " (--port): the address is in use; stop what uses it,"
            + " or choose another port");
      }
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      broker.close();
      stopped.countDown();
    }, "tidemark-kafka-shutdown"));
    spec.commandLine().getOut().println("Kafka broker ready: " + broker.bootstrapServers() + " (data in " + broker.logDir()
        + "). For a trial only: one replica, no authentication. Stop with Ctrl-C.");
    spec.commandLine().getOut().flush();
    stopped.await();
    return 0;
  }
}
