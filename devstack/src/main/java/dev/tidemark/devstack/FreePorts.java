package dev.tidemark.devstack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Picks free TCP ports on the loopback interface for the embedded dev/test servers. */
public final class FreePorts {

  private FreePorts() {}

  /**
   * Returns {@code count} distinct ports that were free on 127.0.0.1 a moment ago.
   *
   * <p>All sockets stay open until every port is chosen so that one call never hands out the same port twice. There
   * is still a short window between closing them and the server binding, which callers must accept.
   */
  public static int[] allocate(int count) {
    if (count < 1) {
      throw new IllegalArgumentException("count must be at least 1");
    }
    ServerSocket[] sockets = new ServerSocket[count];
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        sockets[i] = new ServerSocket();
        // No SO_REUSEADDR: a port still in TIME_WAIT would be handed out and then fail to bind.
        sockets[i].setReuseAddress(false);
        sockets[i].bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        ports[i] = sockets[i].getLocalPort();
      }
      return ports;
    } catch (IOException e) {
      throw new UncheckedIOException("could not find a free port on 127.0.0.1", e);
    } finally {
      for (ServerSocket s : sockets) {
        if (s != null) {
          try {
            s.close();
          } catch (IOException ignored) {
            // the port is released either way
          }
        }
      }
    }
  }

  /** Returns one port that was free on 127.0.0.1 a moment ago. */
  public static int allocate() {
    return allocate(1)[0];
  }
}
