package dev.tidemark.architecture;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The gateway's packages depend on each other in one direction only: a cycle between two of them
 * means neither can be read, tested or changed without the other, and the layering of the
 * endpoint (era, method table, the methods, calls and streams, the services below) is lost.
 */
class GatewayPackagesTest {

  private static final Path ROOT = Path.of(System.getProperty("tidemark.root", "..")).toAbsolutePath().normalize();

  @Test
  void theGatewaysPackagesHaveNoCycle() {
    Path classes = ROOT.resolve("gateway/target/classes");
    assertTrue(Files.isDirectory(classes), classes + " is missing: build gateway first (run this through the reactor)");
    JavaClasses gateway = new ClassFileImporter().importPath(classes);
    assertTrue(gateway.size() > 50, "imported only " + gateway.size() + " classes of the gateway");
    slices().matching("dev.tidemark.gateway.(**)").should().beFreeOfCycles()
        .as("the gateway's packages depend on each other without a cycle")
        .check(gateway);
  }
}
