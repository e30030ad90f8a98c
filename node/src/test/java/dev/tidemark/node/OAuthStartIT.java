package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node whose authentication settings cannot work does not start, and says which setting to fix.
 * What the gateway does with OAuth access tokens once it runs is tested in module gateway (OAuthIT).
 */
@ExtendWith(InfraExtension.class)
class OAuthStartIT {

  @Test
  void aCeilingNamingAToolThatDoesNotExistStopsTheStart(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);
    assertThrows(IllegalStateException.class, () -> TestNodes.startAlone(infra, "gateway", Map.of(
        ConfigKey.AUTH_ROLE_TOOLS, DevSetup.READER_ROLE + ":status|qurey")));
  }

  @Test
  void anUnreachableIssuerStopsTheStartWithAClearMessage(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> TestNodes.startAlone(infra, "gateway", Map.of(
        ConfigKey.HTTP_PUBLIC_URL, "http://127.0.0.1:1",
        ConfigKey.AUTH_OAUTH_ISSUER, "http://127.0.0.1:" + FreePorts.allocate(),
        ConfigKey.AUTH_OAUTH_ROLES, DevSetup.READER_ROLE)));
    String message = String.valueOf(e.getCause());
    assertTrue(message.contains("auth.oauth.issuer") && message.contains("metadata"), message);
  }
}
