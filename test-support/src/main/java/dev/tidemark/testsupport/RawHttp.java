package dev.tidemark.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * A minimal HTTP/1.1 client over a plain socket, one connection per request, for tests that must
 * control every byte: any header (Host, Content-Length, Transfer-Encoding), bodies that stall, and
 * the exact status line. An event stream is read for a short while and then the connection is closed.
 */
public final class RawHttp {

  /** How long an event stream is read before the client hangs up. */
  public static final long STREAM_READ_MILLIS = 150;

  private RawHttp() {}

  /** One answer: status line parts, headers in order, body (de-chunked). */
  public record Response(int status, String reason, List<String[]> headers, byte[] body, boolean streamCut) {

    public String header(String name) {
      for (String[] h : headers) {
        if (h[0].equalsIgnoreCase(name)) {
          return h[1];
        }
      }
      return null;
    }

    public String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** The request could not be written in full and no answer came: the server closed the connection first. */
  public static final class Refused extends IOException {
    Refused(String message) {
      super(message);
    }
  }

  /** The status line and headers, or empty when the server closed the socket unanswered. */
  public static String readHead(Socket s) throws IOException {
    StringBuilder head = new StringBuilder();
    try {
      InputStream in = s.getInputStream();
      int b;
      while ((b = in.read()) >= 0) {
        head.append((char) b);
        if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) {
          break;
        }
      }
    } catch (SocketException e) {
      // a reset: closed without an answer
    }
    return head.toString();
  }

  /**
   * Sends one request. {@code headers} are sent as given (name, value); Content-Length is added for
   * a body unless a Content-Length or Transfer-Encoding header is given. With {@code chunked} the
   * body goes out in chunks. With {@code stallAfter} &gt;= 0 only that many bytes of the body are sent
   * and the connection is held open.
   */
  public static Response exchange(int port, String method, String path, List<String[]> headers, byte[] body, boolean chunked,
      int stallAfter, long timeoutMs) throws IOException, TimeoutException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setTcpNoDelay(true);
      StringBuilder head = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\n");
      boolean hasHost = false;
      boolean hasLength = false;
      for (String[] h : headers) {
        hasHost |= h[0].equalsIgnoreCase("Host");
        hasLength |= h[0].equalsIgnoreCase("Content-Length") || h[0].equalsIgnoreCase("Transfer-Encoding");
      }
      if (!hasHost) {
        head.append("Host: 127.0.0.1:").append(port).append("\r\n");
      }
      for (String[] h : headers) {
        head.append(h[0]).append(": ").append(h[1]).append("\r\n");
      }
      if (body != null && !hasLength) {
        if (chunked) {
          head.append("Transfer-Encoding: chunked\r\n");
        } else {
          head.append("Content-Length: ").append(stallAfter >= 0 ? body.length + 100 : body.length).append("\r\n");
        }
      }
      head.append("Connection: close\r\n\r\n");
      OutputStream out = socket.getOutputStream();
      IOException writeFailure = null;
      try {
        out.write(head.toString().getBytes(StandardCharsets.UTF_8));
        if (body != null) {
          if (stallAfter >= 0) {
            out.write(body, 0, Math.min(stallAfter, body.length));
          } else if (chunked) {
            int step = Math.max(1, body.length / 4);
            for (int i = 0; i < body.length; i += step) {
              int n = Math.min(step, body.length - i);
              out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
              out.write(body, i, n);
              out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            }
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          } else {
            out.write(body);
          }
        }
        out.flush();
      } catch (IOException e) {
        writeFailure = e; // the server may have answered and closed early (413, 401): read what it said
      }
      try {
        return read(socket, method, deadline);
      } catch (IOException e) {
        if (writeFailure != null) {
          throw new Refused("the server closed the connection before the request was written: " + writeFailure);
        }
        throw e;
      }
    }
  }

  private static Response read(Socket socket, String method, long deadline) throws IOException, TimeoutException {
    InputStream in = new java.io.BufferedInputStream(socket.getInputStream(), 65_536);
    Reader reader = new Reader(socket, in, deadline);
    String statusLine = reader.line();
    if (statusLine == null) {
      throw new IOException("the connection closed without an answer");
    }
    String[] parts = statusLine.split(" ", 3);
    int status = Integer.parseInt(parts[1]);
    String reason = parts.length > 2 ? parts[2] : "";
    List<String[]> headers = new ArrayList<>();
    String line;
    while ((line = reader.line()) != null && !line.isEmpty()) {
      int colon = line.indexOf(':');
      headers.add(new String[] {line.substring(0, colon).trim(), line.substring(colon + 1).trim()});
    }
    String type = "";
    String length = null;
    boolean chunked = false;
    for (String[] h : headers) {
      String name = h[0].toLowerCase(Locale.ROOT);
      if (name.equals("content-type")) {
        type = h[1];
      } else if (name.equals("content-length")) {
        length = h[1];
      } else if (name.equals("transfer-encoding")) {
        chunked = h[1].toLowerCase(Locale.ROOT).contains("chunked");
      }
    }
    if (method.equals("HEAD") || status == 204 || status == 304) {
      return new Response(status, reason, headers, new byte[0], false);
    }
    boolean stream = type.startsWith("text/event-stream");
    if (stream) {
      // an event stream may stay open: read until it ends or the short window closes
      reader.shorten(System.currentTimeMillis() + STREAM_READ_MILLIS);
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    boolean cut = false;
    try {
      if (chunked) {
        while (true) {
          String size = reader.line();
          if (size == null) {
            break;
          }
          int n = Integer.parseInt(size.split(";")[0].trim(), 16);
          if (n == 0) {
            reader.line();
            break;
          }
          body.write(reader.bytes(n));
          reader.line();
        }
      } else if (length != null) {
        body.write(reader.bytes(Integer.parseInt(length)));
      } else {
        body.write(reader.rest());
      }
    } catch (TimeoutException e) {
      if (!stream) {
        throw e;
      }
      body.write(reader.pending());
      cut = true;
    }
    return new Response(status, reason, headers, body.toByteArray(), cut);
  }

  /** Reads lines and byte counts from a socket under a deadline. */
  private static final class Reader {
    private final Socket socket;
    private final InputStream in;
    private long deadline;
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

    Reader(Socket socket, InputStream in, long deadline) {
      this.socket = socket;
      this.in = in;
      this.deadline = deadline;
    }

    void shorten(long until) {
      deadline = Math.min(deadline, until);
    }

    private int next() throws IOException, TimeoutException {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        throw new TimeoutException("no answer in time");
      }
      socket.setSoTimeout((int) Math.max(1, left));
      try {
        int b = in.read();
        if (b >= 0) {
          partial.write(b);
        }
        return b;
      } catch (SocketTimeoutException e) {
        throw new TimeoutException("no answer in time");
      }
    }

    String line() throws IOException, TimeoutException {
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      int b;
      while ((b = next()) >= 0) {
        if (b == '\n') {
          byte[] bytes = line.toByteArray();
          int n = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
          partial.reset();
          return new String(bytes, 0, n, StandardCharsets.UTF_8);
        }
        line.write(b);
      }
      return line.size() == 0 ? null : line.toString(StandardCharsets.UTF_8);
    }

    byte[] bytes(int n) throws IOException, TimeoutException {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (int i = 0; i < n; i++) {
        int b = next();
        if (b < 0) {
          throw new IOException("the body ended early");
        }
        out.write(b);
      }
      partial.reset();
      return out.toByteArray();
    }

    byte[] rest() throws IOException, TimeoutException {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int b;
      while ((b = next()) >= 0) {
        out.write(b);
      }
      return out.toByteArray();
    }

    /** Bytes read since the last complete line or block, for a stream cut short. */
    byte[] pending() {
      return partial.toByteArray();
    }
  }
}
