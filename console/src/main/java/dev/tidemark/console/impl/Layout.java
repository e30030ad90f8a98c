package dev.tidemark.console.impl;

import java.util.List;

/** The frame of every console page: the stylesheet (no script at all), the navigation, who is signed in, and the page's content. */
final class Layout {

  private final String path;
  private final List<String> databases;

  Layout(String path, List<String> databases) {
    this.path = path;
    this.databases = databases;
  }

  String path() {
    return path;
  }

  /** A whole page for {@code person} (null on the sign-in pages), with {@code current} marked in the navigation. */
  String page(Person person, String title, String current, String database, boolean administrator, Html content, String signOutForm) {
    Html h = new Html();
    h.add(head(title));
    h.open("body", "data-page", current);
    h.open("header").open("nav", "aria-label", "Console");
    h.el("strong", "Tidemark console", "class", "brand");
    if (person != null) {
      link(h, "approvals", "Approvals", current, database);
      link(h, "audit", "Audit trail", current, database);
      if (administrator) {
        link(h, "agents", "Agents at work", current, database);
        link(h, "tokens", "Tokens", current, database);
      }
    }
    h.close("nav");
    if (person != null) {
      h.open("div", "class", "who");
      if (databases.size() > 1) {
        h.open("span", "class", "databases").text("Database: ");
        for (String db : databases) {
          if (db.equals(database)) {
            h.el("strong", db);
          } else {
            h.el("a", db, "href", path + "/" + current + "?database=" + db);
          }
          h.text(" ");
        }
        h.close("span");
      }
      h.el("span", person.name(), "class", "person", "data-role", person.caller().pgRole()).text(" (" + person.caller().pgRole() + ") ");
      h.open("form", "method", "post", "action", path + "/sign-out", "class", "inline")
          .empty("input", "type", "hidden", "name", Forms.FIELD, "value", signOutForm)
          .el("button", "Sign out", "type", "submit")
          .close("form");
      h.close("div");
    }
    h.close("header");
    h.open("main").el("h1", title).add(content).close("main");
    h.close("body").close("html");
    return h.toString();
  }

  private void link(Html h, String page, String label, String current, String database) {
    h.el("a", label, "href", path + "/" + page + "?database=" + database, "class", page.equals(current) ? "current" : null,
        "aria-current", page.equals(current) ? "page" : null);
  }

  private Html head(String title) {
    // the doctype is the one piece of markup that is not an element
    return new Html().open("!doctype html").open("html", "lang", "en").open("head")
        .empty("meta", "charset", "utf-8")
        .empty("meta", "name", "viewport", "content", "width=device-width, initial-scale=1")
        .el("title", "Tidemark — " + title)
        .empty("link", "rel", "stylesheet", "href", path + "/static/console.css")
        .close("head");
  }

  /** A refusal's page: what was refused, with its code, the reason, and where to go. */
  String refusal(Person person, Refusal r, String database, boolean administrator, String signOutForm) {
    Html body = new Html().open("section", "class", "refusal", "data-code", r.code.code(), "role", "alert")
        .el("p", r.getMessage(), "class", "message")
        .open("p").text("Code: ").el("code", r.code.code()).close("p")
        .open("p");
    if (r.status == 401) {
      body.el("a", "Sign in", "href", path + "/sign-in");
    } else {
      body.el("a", "Back to the approvals", "href", path + "/approvals?database=" + database);
    }
    body.close("p").close("section");
    return page(r.status == 401 ? null : person, r.title, "refusal", database, administrator, body, signOutForm);
  }
}
