package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.call.Channels;
import dev.tidemark.gateway.impl.call.ResponseChannel;

/** Makes the channel of one request's response, so that an era picks the channel without holding the HTTP response. */
public interface Channels {

  ResponseChannel json();

  /** @param sessionId null on the 2026-07-28 era, whose streams carry no event ids */
  ResponseChannel sse(String sessionId);
}
