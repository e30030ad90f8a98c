package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.call.ResponseChannel;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The first bytes of a stream that outlives a call. */
class ResponseChannelTest {

  @Test
  void aStayingStreamOpensWithItsReconnectionDelayExceptForTheJdkClientWhoseParserRefusesIt() {
    assertEquals("retry: 1000\n\n", ResponseChannel.openingOf(null));
    assertEquals("retry: 1000\n\n", ResponseChannel.openingOf("node"));
    assertEquals(":\n\n", ResponseChannel.openingOf("Java-http-client/17.0.14"), "the MCP Java SDK's transport sends the JDK's own User-Agent");
  }
}
