package dev.tidemark.console.impl;

/**
 * A page built as text in which everything given is escaped: element names and attribute names
 * are the console's own constants, and every text and attribute value (a row's value, a caller's
 * name, a reason someone wrote) goes through {@link #escape}. Nothing a person or an agent wrote can
 * become markup, whatever it holds.
 */
final class Html {

  private final StringBuilder out = new StringBuilder(4096);

  /** Text safe in an element's content and in a quoted attribute value. */
  static String escape(Object value) {
    String s = String.valueOf(value);
    StringBuilder b = new StringBuilder(s.length() + 16);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        // a NUL or another control character shows as what it is, not as nothing
        default -> {
          if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
            b.append("\\u").append(String.format("%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.toString();
  }

  /** {@code <tag name="value" ...>}: attributes as name, value pairs; a null value leaves its attribute out. */
  Html open(String tag, String... attributes) {
    out.append('<').append(tag);
    for (int i = 0; i + 1 < attributes.length; i += 2) {
      if (attributes[i + 1] != null) {
        out.append(' ').append(attributes[i]).append("=\"").append(escape(attributes[i + 1])).append('"');
      }
    }
    out.append('>');
    return this;
  }

  Html close(String tag) {
    out.append("</").append(tag).append('>');
    return this;
  }

  /** An element holding only {@code text}. */
  Html el(String tag, Object text, String... attributes) {
    return open(tag, attributes).text(text).close(tag);
  }

  /** An element without content ({@code input}, {@code meta}, {@code link}). */
  Html empty(String tag, String... attributes) {
    return open(tag, attributes);
  }

  Html text(Object text) {
    out.append(escape(text));
    return this;
  }

  /** Another page part, already built the same way. */
  Html add(Html part) {
    out.append(part.out);
    return this;
  }

  @Override
  public String toString() {
    return out.toString();
  }
}
