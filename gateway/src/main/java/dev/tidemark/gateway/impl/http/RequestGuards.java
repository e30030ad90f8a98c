package dev.tidemark.gateway.impl.http;

import dev.tidemark.config.TidemarkConfig;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The checks a request passes before its credentials are looked at or its body is read, in the
 * order the transport gives: a header sent twice (400), Origin and Host (403), the database in
 * the path (404), and for a POST the content type (415). Each either refuses or hands the request on.
 */
public final class RequestGuards {

  /** Headers a request may carry once: with two, a proxy and Tidemark could each act on a different one. */
  private static final List<String> SINGLE_HEADERS = List.of("Authorization", "Origin", "Host");

  private final Set<String> allowedOrigins;
  private final boolean loopbackOnly;
  /** The served databases, the default (the one the bare path serves) first. */
  private final List<String> databases;
  private final String path;

  public RequestGuards(TidemarkConfig config) {
    this(Set.copyOf(config.http().allowedOrigins()), TidemarkConfig.isLoopback(config.http().host()), config.databaseNames(),
        config.http().path());
  }

  RequestGuards(Set<String> allowedOrigins, boolean loopbackOnly, List<String> databases, String path) {
    this.allowedOrigins = allowedOrigins;
    this.loopbackOnly = loopbackOnly;
    this.databases = List.copyOf(databases);
    this.path = path;
  }

  /**
   * The database a path addresses: the one it names, or the default when it names none; an unknown
   * one is a 404 that lists the endpoints (never the name sent).
   */
  public String database(String databaseInPath) {
    if (databaseInPath == null) {
      return databases.get(0);
    }
    if (!databases.contains(databaseInPath)) {
      throw Refusal.http(404, "No database is served at this path; the endpoints are " + path + " (" + databases.get(0) + "), "
          + String.join(", ", databases.stream().map(d -> path + "/" + d).toList()) + ".");
    }
    return databaseInPath;
  }

  /** The database the request addresses (the path's, or the default one when the path names none); throws a {@link Refusal}. */
  public String check(MultiMap headers, String databaseInPath) {
    for (String name : SINGLE_HEADERS) {
      if (headers.getAll(name).size() > 1) {
        throw Refusal.http(400, "Send at most one " + name + " header; this request has several.");
      }
    }
    String origin = headers.get(HttpHeaders.ORIGIN);
    if (origin != null && !allowedOrigins.contains(origin) && !originIsLoopback(origin)) {
      throw Refusal.http(403, "Requests from this Origin are not allowed.");
    }
    if (loopbackOnly && !hostIsLoopback(headers.get(HttpHeaders.HOST))) {
      throw Refusal.http(403, "This server only answers requests addressed to a loopback host.");
    }
    return database(databaseInPath);
  }

  /** A POST carries JSON: the media type is what comes before any parameters (a header of only ";" has an empty one). */
  public static void requireJson(String contentType) {
    String mediaType = contentType == null ? null : contentType.substring(0, contentType.indexOf(';') < 0 ? contentType.length() : contentType.indexOf(';'));
    if (mediaType == null || !mediaType.trim().equalsIgnoreCase("application/json")) {
      throw Refusal.http(415, "Send the JSON-RPC message with Content-Type: application/json.");
    }
  }

  public static boolean accepts(String accept, String mediaType) {
    return accept != null && (accept.contains(mediaType) || accept.contains("*/*"));
  }

  /** An origin is a scheme, a host and maybe a port, nothing else; its host must be a loopback literal or localhost. */
  static boolean originIsLoopback(String origin) {
    try {
      URI uri = new URI(origin);
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getRawUserInfo() == null
          && (uri.getRawPath() == null || uri.getRawPath().isEmpty()) && uri.getRawQuery() == null && uri.getRawFragment() == null
          && TidemarkConfig.isLoopback(uri.getHost());
    } catch (URISyntaxException e) {
      return false;
    }
  }

  /** Compiled once: String.matches compiled it on every request, 2 % of a get_row's event-loop time. */
  private static final Pattern PORT = Pattern.compile(":[0-9]{1,5}");

  /** A Host header of a loopback name or literal, with or without a port; anything more is refused. */
  static boolean hostIsLoopback(String host) {
    if (host == null) {
      return true; // HTTP/1.0 without Host: nothing to rebind
    }
    String name;
    String port;
    if (host.startsWith("[")) {
      int close = host.indexOf(']');
      if (close < 0) {
        return false;
      }
      name = host.substring(0, close + 1);
      port = host.substring(close + 1);
    } else {
      int colon = host.indexOf(':');
      name = colon < 0 ? host : host.substring(0, colon);
      port = colon < 0 ? "" : host.substring(colon);
    }
    return (port.isEmpty() || PORT.matcher(port).matches()) && TidemarkConfig.isLoopback(name);
  }
}
