package dev.tidemark.console.impl;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.Optional;

/**
 * The console's protection against forged and replayed forms. Every form a page shows carries a
 * token sealed for the sign-in that opened the page, naming the one action and target it is for
 * (approve proposal X, revoke token Y) and when it expires; the request that sends it must be that
 * action on that target. A form is taken once: its nonce goes into a cluster map (until the form
 * would have expired), so a second sending, to any node, is refused. This is the CSRF check of every
 * state-changing request, beside the SameSite=Strict cookie and the Origin check.
 */
final class Forms {

  static final String FIELD = "form_token";
  /** How long a form may wait before it is sent. */
  static final long LIFETIME_MS = 60 * 60 * 1000L;

  private final Vertx vertx;
  private final Sealer sealer;

  Forms(Vertx vertx, Sealer sealer) {
    this.vertx = vertx;
    this.sealer = sealer;
  }

  /** A token for one form of {@code person}'s page: {@code action} on {@code target}. */
  String token(Person person, String action, String target) {
    return sealer.seal("form", person.sid(), new JsonObject().put("a", action).put("t", target).put("n", SignIns.randomId(18))
        .put("e", System.currentTimeMillis() + LIFETIME_MS));
  }

  /**
   * Completes with the form's nonce once {@code sent} is a token {@code person} got for exactly this
   * action and target, not expired and not sent before; otherwise fails with a FORM_REFUSED page.
   */
  Future<String> take(Person person, String sent, String action, String target) {
    if (sent == null || sent.isEmpty()) {
      return Future.failedFuture(Refusal.form("The form came without its form token, so it may not have been sent from a console"
          + " page (a forged request). Nothing was done; open the page again and send the form from there."));
    }
    Optional<JsonObject> form = sealer.open("form", person.sid(), sent);
    if (form.isEmpty()) {
      return Future.failedFuture(Refusal.form("The form's token was not made for your sign-in (it is altered, forged, from another"
          + " person's page, or from before you signed in again). Nothing was done; open the page again and send the form from there."));
    }
    JsonObject f = form.get();
    if (!action.equals(f.getString("a")) || !target.equals(f.getString("t"))) {
      return Future.failedFuture(Refusal.form("The form's token was made for another action than this one (" + action + "), so the"
          + " form was altered. Nothing was done; open the page again and send the form from there."));
    }
    long expires = f.getLong("e", 0L);
    long left = expires - System.currentTimeMillis();
    if (left <= 0) {
      return Future.failedFuture(Refusal.form("The form is more than an hour old. Nothing was done; open the page again and send"
          + " the form from there."));
    }
    String nonce = f.getString("n");
    return used().compose(m -> m.putIfAbsent(nonce, true, left)).compose(before -> before == null
        ? Future.succeededFuture(nonce)
        : Future.failedFuture(new Refusal(409, ErrorCode.FORM_REFUSED, "Form sent already", "This form was sent already (a"
            + " replayed form, or a second click); it is taken once. Nothing more was done; open the page again to see where"
            + " things stand.")));
  }

  private Future<AsyncMap<String, Boolean>> used() {
    return vertx.sharedData().getAsyncMap(Addresses.CONSOLE_FORMS_MAP);
  }
}
