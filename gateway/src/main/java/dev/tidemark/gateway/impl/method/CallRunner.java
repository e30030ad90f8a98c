package dev.tidemark.gateway.impl.method;

import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Drain;
import dev.tidemark.gateway.impl.call.InFlight;
import dev.tidemark.gateway.impl.http.Authentication;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.Meta;
import dev.tidemark.gateway.impl.stream.ResponseChannel;
import io.vertx.core.AsyncResult;
import io.vertx.core.json.JsonObject;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one call, whichever era it came in: held in flight so that a cancellation or a revocation
 * can end it, dispatched through the method table, and answered on its channel, unless it was
 * cancelled, in which case no response follows.
 */
public final class CallRunner {

  private static final Logger LOG = LoggerFactory.getLogger(CallRunner.class);

  private final MethodTable methods;
  private final InFlight inFlight;
  private final ServerInfo info;

  public CallRunner(MethodTable methods, InFlight inFlight, ServerInfo info) {
    this.methods = methods;
    this.inFlight = inFlight;
    this.info = info;
  }

  public void run(Call call) {
    ResponseChannel channel = call.channel();
    String key = call.modern() ? UUID.randomUUID().toString() : call.inflightKey();
    Runnable cancel = () -> {
      call.cancellation().cancel();
      channel.abandon();
    };
    Runnable revoke = () -> {
      if (inFlight.releaseCall(key)) {
        call.cancellation().cancel();
        channel.revoked(JsonRpc.error(call.id(), JsonRpc.INVALID_REQUEST, Authentication.REVOKED_MESSAGE));
      }
    };
    // a draining node that can wait no longer stops the statement and says to send the call elsewhere
    Runnable cut = () -> {
      if (inFlight.releaseCall(key)) {
        call.cancellation().cancel();
        channel.finish(503, Drain.error(call.id(), Drain.CUT_MESSAGE));
      }
    };
    if (!inFlight.holdCall(key, new InFlight.Held(call.caller().id(), cancel, revoke, cut), call.authenticatedAtNanos())) {
      return; // revoked while its credentials were being checked
    }
    if (call.modern()) {
      // closing the response stream is the cancellation on this era
      channel.onClose(() -> {
        if (inFlight.releaseCall(key)) {
          call.cancellation().cancel();
        }
      });
    }
    channel.open()
        .compose(v -> methods.dispatch(call))
        .onComplete(ar -> {
          if (inFlight.releaseCall(key)) {
            answer(call, ar);
          } // else cancelled: the request gets no response
        });
  }

  private void answer(Call call, AsyncResult<JsonObject> ar) {
    JsonObject message;
    int status = 200;
    if (ar.succeeded()) {
      JsonObject result = ar.result();
      if (call.modern()) {
        result.put("resultType", result.getString("resultType", "complete"));
        result.put("_meta", result.getJsonObject("_meta", new JsonObject()).put(Meta.SERVER_INFO, info.serverInfo()));
      }
      message = JsonRpc.result(call.id(), result);
    } else if (ar.cause() instanceof RpcFailure f) {
      message = f.toMessage(call.id());
      status = f.httpStatus();
    } else {
      LOG.warn("{} failed", call.method(), ar.cause());
      message = JsonRpc.error(call.id(), JsonRpc.INTERNAL_ERROR, "Internal error; retry, and report it if it persists.");
    }
    call.channel().finish(status, message);
  }
}
