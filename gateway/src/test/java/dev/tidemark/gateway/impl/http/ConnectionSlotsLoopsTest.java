package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.gateway.impl.EventLoops;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One node's connection slots, used by gateway instances on several event loops at once. */
class ConnectionSlotsLoopsTest {

  /** A connection as the slots see it: one that can be closed, and says so to its close handler. */
  private static final class Socket {
    final HttpConnection connection;
    final AtomicInteger closes = new AtomicInteger();
    private volatile Handler<Void> onClose;

    @SuppressWarnings("unchecked") // the proxy's one handler argument is the close handler
    Socket() {
      connection = (HttpConnection) Proxy.newProxyInstance(HttpConnection.class.getClassLoader(), new Class<?>[] {HttpConnection.class},
          (proxy, method, args) -> switch (method.getName()) {
            case "closeHandler" -> {
              onClose = (Handler<Void>) args[0];
              yield proxy;
            }
            case "close" -> {
              close();
              yield null;
            }
            case "hashCode" -> System.identityHashCode(proxy);
            case "equals" -> proxy == args[0];
            case "toString" -> "socket";
            default -> throw new UnsupportedOperationException(method.getName());
          });
    }

    void close() {
      if (closes.getAndIncrement() == 0 && onClose != null) {
        onClose.handle(null);
      }
    }
  }

  @Test
  void fourLoopsAuthenticatingAtOnceGetExactlyTheNodesCapAndAClosedSlotIsFreeOnAnyLoop() throws Exception {
    int loops = 4;
    int perLoop = 100;
    int cap = 10;
    try (EventLoops el = new EventLoops(loops)) {
      ConnectionSlots slots = new ConnectionSlots(cap, loops * perLoop);
      ConcurrentLinkedQueue<Socket> admitted = new ConcurrentLinkedQueue<>();
      race(el, perLoop, () -> openAndAuthenticate(slots, admitted));
      assertEquals(cap, admitted.size(), "the cap is the node's, not one per loop");
      admitted.forEach(s -> assertTrue(slots.isAuthenticated(s.connection)));
      // a connection that is already in keeps its slot on its next request
      assertTrue(slots.authenticate(admitted.peek().connection));

      // the admitted close, each on another loop than the ones racing for their slots
      List<Socket> leaving = new ArrayList<>(admitted);
      for (int i = 0; i < leaving.size(); i++) {
        Socket s = leaving.get(i);
        el.run(i % loops, s::close).get(10, TimeUnit.SECONDS);
        assertFalse(slots.isAuthenticated(s.connection));
      }
      ConcurrentLinkedQueue<Socket> next = new ConcurrentLinkedQueue<>();
      race(el, perLoop, () -> openAndAuthenticate(slots, next));
      assertEquals(cap, next.size(), "every closed slot was given back, and no more");
    }
  }

  @Test
  void silentConnectionsFromFourLoopsAreCappedTogetherAndTheEvictedAreClosedOnce() throws Exception {
    int loops = 4;
    int perLoop = 250;
    int cap = 64;
    try (EventLoops el = new EventLoops(loops)) {
      ConnectionSlots slots = new ConnectionSlots(10, cap);
      List<ConcurrentLinkedQueue<Socket>> byLoop = new ArrayList<>();
      for (int i = 0; i < loops; i++) {
        byLoop.add(new ConcurrentLinkedQueue<>());
      }
      race(el, perLoop, () -> {
        Socket s = new Socket();
        byLoop.get(el.current()).add(s);
        slots.opened(s.connection);
      });
      List<Socket> opened = byLoop.stream().flatMap(ConcurrentLinkedQueue::stream).toList();
      List<Socket> open = opened.stream().filter(s -> s.closes.get() == 0).toList();
      assertEquals(cap, open.size(), "the unauthenticated pool is the node's");
      assertTrue(opened.stream().allMatch(s -> s.closes.get() <= 1), "an evicted connection is closed once");
      // the longest waiting go first: of each loop's connections, those still open are its newest
      for (ConcurrentLinkedQueue<Socket> loop : byLoop) {
        List<Integer> closes = loop.stream().map(s -> s.closes.get()).toList();
        int firstOpen = closes.indexOf(0);
        assertTrue(firstOpen < 0 || closes.subList(firstOpen, closes.size()).stream().allMatch(c -> c == 0), closes.toString());
      }
      // so a flood costs a new client nothing but a retry
      Socket newest = new Socket();
      slots.opened(newest.connection);
      assertTrue(slots.authenticate(newest.connection), "a new connection is never refused for the flood");
      assertEquals(1, open.stream().filter(s -> s.closes.get() == 1).count(), "the longest waiting one made room");
    }
  }

  /** A new connection whose request passed the credential check; kept in {@code admitted} when it got a slot. */
  private static void openAndAuthenticate(ConnectionSlots slots, ConcurrentLinkedQueue<Socket> admitted) {
    Socket s = new Socket();
    slots.opened(s.connection);
    if (slots.authenticate(s.connection)) {
      admitted.add(s);
    }
  }

  /** Runs {@code step} {@code times} times on every loop at once. */
  private static void race(EventLoops el, int times, Runnable step) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int loop = 0; loop < el.size(); loop++) {
      done.add(el.run(loop, () -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        for (int i = 0; i < times; i++) {
          step.run();
        }
      }));
    }
    go.countDown();
    CompletableFuture.allOf(done.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
  }
}
