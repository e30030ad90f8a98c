package dev.tidemark.node.cli;

import dev.tidemark.auth.TokenStore;
import dev.tidemark.auth.Tokens;
import dev.tidemark.contract.Access;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.node.migrate.CallerRoleCheck;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tidemark token}: bearer tokens, kept hashed in Tidemark's schema; a new token is shown once. */
@Command(name = "token", mixinStandardHelpOptions = true, description = "Creates, lists and revokes bearer tokens.",
    subcommands = {TokenCommand.Create.class, TokenCommand.ListTokens.class, TokenCommand.Revoke.class})
final class TokenCommand extends CommandGroup {

  /** Options every token command shares. */
  static class Common {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    DatabaseOptions options;

    <T> T withStore(Function<TokenStore, Future<T>> work) {
      TidemarkConfig cfg = options.load();
      try (CommandSession session = options.open(cfg.database())) {
        return session.await(work.apply(TokenStore.create(session.pool())));
      }
    }
  }

  @Command(name = "create", mixinStandardHelpOptions = true, description = "Creates a token and prints it once; only its hash is kept.")
  static final class Create extends Common implements Callable<Integer> {
    @Option(names = "--name", required = true, description = "A unique name: letters, digits, '.', '_' and '-', at most 64.")
    String name;

    @Option(names = "--role", required = true, description = "The PostgreSQL role every statement of this caller runs as.")
    String role;

    @Option(names = "--read-only", description = "Cap the caller at reading, whatever the role's grants allow.")
    boolean readOnly;

    @Option(names = "--database", split = ",", paramLabel = "NAME", description = "Databases the token may reach (default: all).")
    List<String> databases;

    @Option(names = "--expires-in", paramLabel = "DURATION", description = "How long the token stays valid: a number and s, m, h or d,"
        + " such as 90d or 12h (default: until revoked).")
    String expiresIn;

    @Override
    public Integer call() {
      if (!name.matches("[A-Za-z0-9._-]{1,64}")) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--name: use 1 to 64 letters, digits, '.', '_' or '-'");
      }
      java.time.Instant expiresAt = null;
      if (expiresIn != null) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([1-9][0-9]{0,8})([smhd])").matcher(expiresIn.trim());
        if (!m.matches()) {
          throw new CommandLine.ParameterException(spec.commandLine(), "--expires-in: use a number and s, m, h or d, such as 90d or 12h");
        }
        long seconds = Long.parseLong(m.group(1)) * switch (m.group(2)) {
          case "s" -> 1L;
          case "m" -> 60L;
          case "h" -> 3600L;
          default -> 86_400L;
        };
        expiresAt = java.time.Instant.now().plusSeconds(seconds);
      }
      String token = Tokens.generate();
      java.time.Instant until = expiresAt;
      TidemarkConfig cfg = options.load();
      List<String> reach = databases == null ? List.of("*") : databases;
      for (String db : reach) {
        if (!db.equals("*") && !cfg.databaseNames().contains(db)) {
          throw new CommandLine.ParameterException(spec.commandLine(), "--database: " + db + " is not served; the config serves "
              + cfg.databaseNames());
        }
      }
      String id;
      try (CommandSession session = options.open(cfg.database())) {
        // a token whose role cannot log in would be refused every call: say so now, not at the agent's first call
        List<String> problems = new java.util.ArrayList<>();
        for (TidemarkConfig.DatabaseConfig db : cfg.databases()) {
          if (reach.contains("*") || reach.contains(db.name())) {
            CommandSession on = db.name().equals(cfg.database().name()) ? session : null;
            problems.addAll(on != null
                ? session.await(CallerRoleCheck.loginProblems(session.vertx(), session.pool(), db, role, cfg.databases().size() > 1))
                : loginProblemsElsewhere(db, cfg.databases().size() > 1));
          }
        }
        if (!problems.isEmpty()) {
          throw new CommandFailure("no token was created, because a caller with role " + role + " could not run a single"
              + " statement: " + String.join("; ", problems));
        }
        id = session.await(TokenStore.create(session.pool()).put(name, token, role, readOnly ? Access.READ_ONLY : Access.READ_WRITE,
            reach, until));
      }
      spec.commandLine().getOut().println("Token " + name + " (" + id + "), shown once: " + token
          + (until == null ? "" : " (valid until " + until.truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + ")"));
      return 0;
    }

    private List<String> loginProblemsElsewhere(TidemarkConfig.DatabaseConfig db, boolean nameDatabase) {
      try (CommandSession other = options.open(db)) {
        return other.await(CallerRoleCheck.loginProblems(other.vertx(), other.pool(), db, role, nameDatabase));
      }
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists every token, without the tokens themselves.")
  static final class ListTokens extends Common implements Callable<Integer> {
    @Override
    public Integer call() {
      List<JsonObject> tokens = withStore(TokenStore::list);
      tokens.forEach(t -> spec.commandLine().getOut().println(t.encode()));
      return 0;
    }
  }

  @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revokes a token; every node refuses it, and ends its streams and sessions, within a second.")
  static final class Revoke extends Common implements Callable<Integer> {
    @Option(names = "--name", required = true, description = "The token's name.")
    String name;

    @Override
    public Integer call() {
      withStore(store -> store.revoke(name).map(v -> (Void) null));
      spec.commandLine().getOut().println("Token " + name + " revoked.");
      return 0;
    }
  }
}
