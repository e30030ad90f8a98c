package dev.tidemark.gateway.impl.session;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The id of one SSE event of a 2025-11-25 session: the stream it belongs to and its place in that
 * stream, written {@code <stream>-<seq>}. The stream is {@link #GET_STREAM} for the session's GET
 * stream, and {@code p} with 16 random hex digits for each POST stream, so an id says which stream
 * a client resumes and no counter is shared between streams.
 */
public record EventId(String stream, long seq) {

  /** The stream of a session's GET stream: the one stream that outlives its connection. */
  public static final String GET_STREAM = "g";

  private static final SecureRandom RANDOM = new SecureRandom();
  /** Far below {@link Long#MAX_VALUE}, so that reading after a given seq can never overflow. */
  private static final long MAX_SEQ = Long.MAX_VALUE / 2;

  /** The name of a new POST stream: 64 random bits, unique within a session without asking anyone. */
  public static String newPostStream() {
    byte[] bytes = new byte[8];
    RANDOM.nextBytes(bytes);
    return "p" + HexFormat.of().formatHex(bytes);
  }

  public boolean onGetStream() {
    return GET_STREAM.equals(stream);
  }

  @Override
  public String toString() {
    return stream + "-" + seq;
  }

  /** The id a client sent as {@code Last-Event-ID}; null when it is not one this server issues. */
  public static EventId parse(String header) {
    if (header == null) {
      return null;
    }
    String s = header.trim();
    int dash = s.lastIndexOf('-');
    if (dash <= 0 || dash == s.length() - 1 || !validStream(s.substring(0, dash))) {
      return null;
    }
    String digits = s.substring(dash + 1);
    if (digits.length() > 18 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return null;
    }
    long seq = Long.parseLong(digits);
    return seq > MAX_SEQ ? null : new EventId(s.substring(0, dash), seq);
  }

  private static boolean validStream(String stream) {
    return GET_STREAM.equals(stream) || (stream.length() == 17 && stream.charAt(0) == 'p'
        && stream.chars().skip(1).allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')));
  }
}
