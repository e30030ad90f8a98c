package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.http.Answer;

/** What an era makes of a request: a call to run, or an answer it gives itself (202 for a notification, an initialize result). */
public sealed interface Turn {

  record Run(Call call) implements Turn {}

  record Answered(Answer answer) implements Turn {}
}
