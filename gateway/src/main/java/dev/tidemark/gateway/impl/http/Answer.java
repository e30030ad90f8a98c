package dev.tidemark.gateway.impl.http;

import io.vertx.core.json.JsonObject;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** One plain HTTP answer: a status, headers in order, and a JSON body (null for none, as for a 202). */
public record Answer(int status, Map<String, String> headers, JsonObject body) {

  public Answer {
    headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
  }

  public static Answer accepted() {
    return new Answer(202, Map.of(), null);
  }

  public static Answer json(int status, JsonObject body) {
    return new Answer(status, Map.of(), body);
  }
}
