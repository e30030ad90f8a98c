package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway's two pools of connections, on real sockets of a loopback HTTP server whose
 * connection handler is the pools', as the gateway's is (each client sends one request head, which
 * the server never answers): the unauthenticated pool gives up its
 * oldest connection when full, the authenticated one refuses past its cap, and a closed connection
 * frees its place.
 */
class ConnectionSlotsTest {

  private static final int MAX_AUTHENTICATED = 3;
  private static final int MAX_UNAUTHENTICATED = 4;

  private Vertx vertx;
  private HttpServer server;
  private ConnectionSlots slots;
  private final BlockingQueue<HttpConnection> accepted = new LinkedBlockingQueue<>();
  private final List<Socket> clients = new ArrayList<>();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    slots = new ConnectionSlots(MAX_AUTHENTICATED, MAX_UNAUTHENTICATED);
    server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
        .connectionHandler(conn -> {
          slots.opened(conn);
          accepted.add(conn);
        })
        .requestHandler(req -> { });  // never answered: the client reads nothing until the server closes
    server.listen().await();
  }

  @AfterEach
  void stop() throws IOException {
    for (Socket s : clients) {
      s.close();
    }
    vertx.close().await();
  }

  /** Opens a client socket and returns the server's side of it. */
  private HttpConnection open() throws Exception {
    Socket socket = new Socket("127.0.0.1", server.actualPort());
    clients.add(socket);
    // Vert.x hands a connection to the server's connection handler with its first request head,
    // not at accept: a socket that sends nothing is bounded by http.idle-timeout-seconds alone
    socket.getOutputStream().write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
    HttpConnection conn = accepted.poll(10, TimeUnit.SECONDS);
    assertTrue(conn != null, "the server saw no connection");
    return conn;
  }

  /** Whether the server closed the client's socket {@code i}: it reads the end of the stream. */
  private boolean closedByServer(int i) throws IOException {
    return closedWithin(i, 5_000);
  }

  /** Whether the server has not closed the client's socket {@code i}: it reads nothing for a moment. */
  private boolean stillOpen(int i) throws IOException {
    return !closedWithin(i, 300);
  }

  private boolean closedWithin(int i, int ms) throws IOException {
    clients.get(i).setSoTimeout(ms);
    InputStream in = clients.get(i).getInputStream();
    try {
      return in.read() == -1;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;  // reset
    }
  }

  @Test
  void aFullUnauthenticatedPoolClosesItsOldestConnectionAndKeepsTheNewOne() throws Exception {
    List<HttpConnection> conns = new ArrayList<>();
    for (int i = 0; i < MAX_UNAUTHENTICATED + 1; i++) {
      conns.add(open());
    }
    assertTrue(closedByServer(0), "the oldest silent connection is closed");
    assertFalse(slots.authenticate(conns.get(0)), "an evicted connection keeps no place");
    assertTrue(slots.authenticate(conns.get(MAX_UNAUTHENTICATED)), "the newest may still authenticate");
  }

  @Test
  void aConnectionWhoseCredentialsAreBeingCheckedIsPassedOverAndTheNextOldestGoes() throws Exception {
    List<HttpConnection> conns = new ArrayList<>();
    for (int i = 0; i < MAX_UNAUTHENTICATED; i++) {
      conns.add(open());
    }
    slots.checking(conns.get(0));
    conns.add(open());
    assertTrue(closedByServer(1), "the oldest connection not being checked is closed");
    assertTrue(stillOpen(0), "the one being checked stays");
    assertTrue(slots.authenticate(conns.get(0)), "and may still authenticate when its check passes");

    slots.checking(conns.get(2));
    slots.checked(conns.get(2));
    open();  // the pool holds 2, 3, 4 and this one: full, no one goes
    assertTrue(stillOpen(2));
    open();
    assertTrue(closedByServer(2), "a connection whose check ended (and failed) is evicted as any other");
  }

  @Test
  void aConnectionWhoseCredentialsWereRefusedGoesBeforeOlderOnes() throws Exception {
    List<HttpConnection> conns = new ArrayList<>();
    for (int i = 0; i < MAX_UNAUTHENTICATED; i++) {
      conns.add(open());
    }
    slots.refused(conns.get(2));
    conns.add(open());
    assertTrue(closedByServer(2), "the refused connection is closed first");
    assertTrue(stillOpen(0), "the oldest, not refused, stays");
    conns.add(open());
    assertTrue(closedByServer(0), "with none refused left, the oldest goes");
  }

  @Test
  void authenticatedConnectionsAreCappedApartAndARefusedOneKeepsNoPlace() throws Exception {
    List<HttpConnection> conns = new ArrayList<>();
    for (int i = 0; i < MAX_AUTHENTICATED + 1; i++) {
      conns.add(open());
    }
    for (int i = 0; i < MAX_AUTHENTICATED; i++) {
      assertTrue(slots.authenticate(conns.get(i)));
      assertTrue(slots.authenticate(conns.get(i)), "a connection already in passes again");
      assertTrue(slots.isAuthenticated(conns.get(i)));
    }
    HttpConnection refused = conns.get(MAX_AUTHENTICATED);
    assertFalse(slots.authenticate(refused), "past http.max-connections");
    assertFalse(slots.isAuthenticated(refused));
    // it left the unauthenticated pool too: as many new silent connections as that pool holds evict nobody
    for (int i = 0; i < MAX_UNAUTHENTICATED; i++) {
      open();
    }
    for (int i = 0; i < clients.size(); i++) {
      assertTrue(stillOpen(i), "connection " + i + " was closed");
    }
  }

  @Test
  void aClosedAuthenticatedConnectionFreesItsPlace() throws Exception {
    List<HttpConnection> conns = new ArrayList<>();
    for (int i = 0; i < MAX_AUTHENTICATED; i++) {
      conns.add(open());
      assertTrue(slots.authenticate(conns.get(i)));
    }
    HttpConnection waiting = open();
    CountDownLatch closed = new CountDownLatch(1);
    vertx.runOnContext(v -> conns.get(0).close().onComplete(x -> closed.countDown()));
    assertTrue(closed.await(10, TimeUnit.SECONDS));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (slots.isAuthenticated(conns.get(0)) && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertFalse(slots.isAuthenticated(conns.get(0)));
    assertTrue(slots.authenticate(waiting), "the freed place is taken by the next connection");
  }

  /** Many threads authenticate many connections at once: exactly the cap get in, and none twice. */
  @Test
  void concurrentAuthenticationsNeverPassTheCap() throws Exception {
    ConnectionSlots wide = new ConnectionSlots(10, 1_000);
    slots = wide;
    List<HttpConnection> conns = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      conns.add(open());
    }
    AtomicInteger admitted = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (HttpConnection conn : conns) {
      Thread t = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        for (int k = 0; k < 3; k++) {  // repeated checks of one connection count it once
          if (wide.authenticate(conn) && k == 0) {
            admitted.incrementAndGet();
          }
        }
      });
      t.start();
      threads.add(t);
    }
    go.countDown();
    for (Thread t : threads) {
      t.join(10_000);
    }
    assertEquals(10, admitted.get());
    assertEquals(10, conns.stream().filter(wide::isAuthenticated).count());
  }
}
