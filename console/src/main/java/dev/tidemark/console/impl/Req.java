package dev.tidemark.console.impl;

import io.vertx.ext.web.RoutingContext;

/**
 * One console request once its sign-in was checked: who, which served database the page is of,
 * and whether the person administers the console.
 */
record Req(RoutingContext ctx, Person person, String database, boolean administrator) {

  /** A query or form parameter, trimmed; null when absent or empty. */
  String param(String name) {
    String v = ctx.request().getParam(name);
    if (v == null && ctx.request().formAttributes() != null) {
      v = ctx.request().getFormAttribute(name);
    }
    v = v == null ? null : v.trim();
    return v == null || v.isEmpty() ? null : v;
  }

  /** A parameter of at most {@code max} characters, or a page that says which one is too long. */
  String param(String name, int max) {
    String v = param(name);
    if (v != null && v.length() > max) {
      throw Refusal.badInput("The field " + name + " takes at most " + max + " characters. Shorten it and send it again.");
    }
    return v;
  }
}
