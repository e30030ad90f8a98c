package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.call.Eras;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.http.Authenticated;
import dev.tidemark.gateway.impl.jsonrpc.Envelope;
import dev.tidemark.gateway.impl.call.Channels;
import dev.tidemark.gateway.impl.call.ResponseChannel;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import java.util.List;
import java.util.function.Function;

/** What the era tests feed an era: a caller that passed its checks, headers, a parsed body, and channels without a response. */
final class EraFixtures {

  static final Authenticated WHO = new Authenticated(new Caller("c-1", "alice", "reader", Access.READ_ONLY, List.of("*")), "main", 42L);

  /** Enough to see which kind of channel an era picks. */
  static final Channels CHANNELS = new Channels() {
    @Override
    public ResponseChannel json() {
      return ResponseChannel.json(null);
    }

    @Override
    public ResponseChannel sse(String sessionId) {
      return ResponseChannel.sse(null, null, sessionId);
    }
  };

  /** Every tool as a catalogue read, which says nothing before its result unless logs are asked for. */
  static final Function<Object, Eras.Voice> READS = name -> Eras.Voice.READ;

  private EraFixtures() {}

  static Envelope parse(String body) {
    return Envelope.parse(Buffer.buffer(body));
  }

  static MultiMap headers(String... nameValues) {
    MultiMap h = MultiMap.caseInsensitiveMultiMap();
    for (int i = 0; i < nameValues.length; i += 2) {
      h.add(nameValues[i], nameValues[i + 1]);
    }
    return h;
  }
}
