package dev.tidemark.node.cli;

/**
 * A command stopped for a reason the person running it can fix: the message is one sentence that names the key,
 * file or right involved and the fix. The command exits with status 2 and prints nothing else.
 */
public final class CommandFailure extends RuntimeException {

  public CommandFailure(String message) {
    super(message, null, false, false);
  }
}
