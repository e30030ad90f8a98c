package dev.tidemark.gateway.impl.call;

import java.util.ArrayList;
import java.util.List;

/** What to undo when a request is cancelled; actions added after the cancellation run at once. */
public final class Cancellation {

  private final List<Runnable> actions = new ArrayList<>();
  private boolean cancelled;

  public synchronized void onCancel(Runnable action) {
    if (cancelled) {
      action.run();
    } else {
      actions.add(action);
    }
  }

  public void cancel() {
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

  public synchronized boolean cancelled() {
    return cancelled;
  }
}
