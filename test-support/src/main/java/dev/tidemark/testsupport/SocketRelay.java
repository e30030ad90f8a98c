package dev.tidemark.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on 127.0.0.1 in front of a real server, for tests of a server that goes away: while
 * it is closed, a connection to its port is refused and every connection it carried is cut, as
 * when the server's host is lost; opened again on the same port, it carries new connections.
 */
public final class SocketRelay implements AutoCloseable {

  private final int port;
  private final int targetPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile ServerSocket server;

  private SocketRelay(int port, int targetPort) {
    this.port = port;
    this.targetPort = targetPort;
  }

  /** A relay from {@code port} to {@code targetPort}, both on 127.0.0.1, open. */
  public static SocketRelay open(int port, int targetPort) {
    SocketRelay relay = new SocketRelay(port, targetPort);
    relay.open();
    return relay;
  }

  public int port() {
    return port;
  }

  /** Takes connections again on the same port. */
  public synchronized void open() {
    try {
      ServerSocket s = new ServerSocket();
      s.setReuseAddress(true);
      s.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      server = s;
      Thread accepting = new Thread(() -> accept(s), "socket-relay-" + port);
      accepting.setDaemon(true);
      accepting.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void accept(ServerSocket s) {
    while (!s.isClosed()) {
      try {
        Socket in = s.accept();
        Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        sockets.add(in);
        sockets.add(out);
        pipe(in, out);
        pipe(out, in);
      } catch (IOException e) {
        // closed, or the target refused: the client sees its connection end
      }
    }
  }

  private void pipe(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16384];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buf)) >= 0) {
          out.write(buf, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // one side ended: both end below
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, "socket-relay-pipe-" + port);
    t.setDaemon(true);
    t.start();
  }

  /** Refuses new connections and cuts every one it carries. */
  @Override
  public synchronized void close() {
    closeQuietly(server);
    sockets.forEach(SocketRelay::closeQuietly);
    sockets.clear();
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      if (c != null) {
        c.close();
      }
    } catch (IOException ignored) {
      // closing is all that was asked
    }
  }
}
