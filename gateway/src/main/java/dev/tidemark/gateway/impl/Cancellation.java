package dev.tidemark.gateway.impl;

import java.util.ArrayList;
import java.util.List;

/** What to undo when a request is cancelled; actions added after the cancellation run at once. */
final class Cancellation {

  private final List<Runnable> actions = new ArrayList<>();
  private boolean cancelled;

  synchronized void onCancel(Runnable action) {
    if (cancelled) {
      action.run();
    } else {
      actions.add(action);
    }
  }

  void cancel() {
    List<Runnable> toRun;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      toRun = new ArrayList<>(actions);
    }
    toRun.forEach(Runnable::run);
  }

  synchronized boolean cancelled() {
    return cancelled;
  }
}
