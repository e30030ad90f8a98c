package dev.tidemark.gateway.impl.completion;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class CompletionTest {

  @Test
  void onlyCandidatesWithThePrefixAreListed() {
    JsonObject completion = Completion.result(List.of("orders", "order_items", "customers"), "ord").getJsonObject("completion");
    assertEquals(List.of("orders", "order_items"), completion.getJsonArray("values").getList());
    assertEquals(2, completion.getInteger("total"));
    assertEquals(false, completion.getBoolean("hasMore"));
  }

  @Test
  void atMostAHundredAreListedAndTheTotalSaysHowManyMatched() {
    List<String> many = IntStream.range(0, 150).mapToObj(i -> "t" + i).toList();
    JsonObject completion = Completion.result(many, "t").getJsonObject("completion");
    assertEquals(100, completion.getJsonArray("values").size());
    assertEquals(150, completion.getInteger("total"));
    assertEquals(true, completion.getBoolean("hasMore"));
  }

  @Test
  void aKeyPrefixIsMatchedLiterallyByLike() {
    assertEquals("50\\%\\_off\\\\%", Completion.likePrefix("50%_off\\"));
    assertEquals("%", Completion.likePrefix(""));
  }
}
