package dev.tidemark.console.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class HtmlTest {

  @Test
  void textAndAttributeValuesAreEscapedWhateverTheyHold() {
    String hostile = "\"><script>alert('x')</script>&amp;";
    String page = new Html().el("td", hostile, "data-column", hostile).toString();
    assertEquals("<td data-column=\"&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;\">"
        + "&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;</td>", page);
  }

  @Test
  void aControlCharacterIsShownAsWhatItIs() {
    assertEquals("a\\u0000b\\u001bc", Html.escape("a\u0000b\u001bc"));
  }

  @Test
  void aNullAttributeIsLeftOut() {
    assertEquals("<a href=\"/x\">go</a>", new Html().el("a", "go", "href", "/x", "class", null).toString());
  }

  @Test
  void aRowMarksTheColumnsWhoseValueChangesAndShowsMarkupAsText() {
    JsonObject change = new JsonObject().put("table", "public.t").put("op", "UPDATE").put("key", new JsonArray().add(1))
        .put("before", new JsonObject().put("id", 1).put("note", "<b>old</b>").put("n", (Object) null))
        .put("after", new JsonObject().put("id", 1).put("note", "<b>new</b>").put("n", (Object) null));
    String html = RowView.of(change).toString();
    assertTrue(html.contains("<tr class=\"changed\" data-column=\"note\">"), html);
    assertTrue(html.contains("<tr data-column=\"id\">") && html.contains("<tr data-column=\"n\">"), html);
    assertTrue(html.contains("&lt;b&gt;new&lt;/b&gt;") && !html.contains("<b>"), html);
    assertTrue(html.contains("<td class=\"null\">NULL</td>"), html);
  }

  @Test
  void anInsertHasNoBeforeAndMarksEveryColumn() {
    JsonObject change = new JsonObject().put("schema", "public").put("table", "t").put("op", "INSERT")
        .put("after", new JsonObject().put("id", 2));
    String html = RowView.of(change).toString();
    assertTrue(html.contains("data-table=\"public.t\"") && html.contains("<tr class=\"changed\" data-column=\"id\">"), html);
    assertTrue(html.contains("<td class=\"none\">—</td>"), html);
  }

  @Test
  void theStatementIsTheSqlOrTheChangeWithoutHowItWasCommitted() {
    assertEquals("UPDATE t SET a = $1\nparams: [1]", ApprovalsPage.statement(new JsonObject().put("sql", "UPDATE t SET a = $1")
        .put("params", new JsonArray().add(1))));
    String args = ApprovalsPage.statement(new JsonObject().put("table", "t").put("plan_id", "p3.x").put("idempotency_key", "k"));
    assertTrue(args.contains("\"table\"") && !args.contains("plan_id") && !args.contains("idempotency_key"), args);
  }

  @Test
  void aNamedToolsProposalShowsItsStatementAndItsArgumentsOnly() {
    JsonObject proposal = new JsonObject().put("arguments", new JsonObject().put("id", 7).put("price", 12.5).put("plan_id", "p3.x"))
        .put("named_tool", new JsonObject().put("name", "set_product_price").put("statement", "UPDATE products SET price = $2 WHERE id = $1"));
    String shown = ApprovalsPage.statementOf(proposal);
    assertTrue(shown.startsWith("UPDATE products SET price = $2 WHERE id = $1\narguments of set_product_price: "), shown);
    assertTrue(shown.contains("\"price\" : 12.5") && !shown.contains("plan_id"), shown);
  }

  @Test
  void thePkceChallengeIsRfc7636s() {
    // RFC 7636, appendix B
    assertEquals("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", OAuthSignIn.challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
  }

  @Test
  void anExpiryIsANumberAndAUnit() {
    assertTrue(TokensPage.expires("90d").isAfter(java.time.Instant.now().plusSeconds(89L * 86_400)));
    assertEquals(null, TokensPage.expires(null));
    for (String bad : new String[] {"0d", "12", "1w", "-1h", "1h;"}) {
      Refusal r = org.junit.jupiter.api.Assertions.assertThrows(Refusal.class, () -> TokensPage.expires(bad), bad);
      assertEquals(400, r.status);
    }
    assertFalse(TokensPage.expires("1s").isBefore(java.time.Instant.now()));
  }

  @Test
  void aFilterTimeIsADateTimeInputsValueInUtcOrAnOffsetTime() {
    assertEquals("2026-12-04T09:30Z", AuditPage.time("2026-12-04T09:30", "from").toString());
    assertEquals("2026-12-04T09:30+01:00", AuditPage.time("2026-12-04T09:30+01:00", "from").toString());
    assertEquals(400, org.junit.jupiter.api.Assertions.assertThrows(Refusal.class, () -> AuditPage.time("yesterday", "from")).status);
  }
}
