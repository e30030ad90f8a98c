package dev.tidemark.gateway.impl.spec;

/** The {@code _meta} keys MCP reserves; on 2026-07-28 a request carries its version and capabilities in them. */
public final class Meta {

  public static final String VERSION = "io.modelcontextprotocol/protocolVersion";
  public static final String CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
  public static final String CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
  public static final String LOG_LEVEL = "io.modelcontextprotocol/logLevel";
  public static final String SERVER_INFO = "io.modelcontextprotocol/serverInfo";
  public static final String SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

  private Meta() {}
}
