package dev.tidemark.node.shipped;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.util.List;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Every class Tidemark's own code in the shipped jar refers to is in the jar. A dependency that Maven gives the tests but
 * not the jar (a test scope in node/pom.xml that overrides another module's compile scope, as happened to the OAuth web
 * client) passes every test on the build's classpath and fails only for the person who runs the jar; the JDK's
 * {@code jdeps} reads the jar's class files and names each reference it cannot resolve inside it.
 */
class FatJarClassesIT {

  @Test
  void everyClassTidemarksCodeRefersToIsInTheJar() {
    assertTrue(Files.isRegularFile(ShippedJar.JAR), ShippedJar.JAR + " is built before the integration tests");
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = jdeps.run(new PrintWriter(out), new PrintWriter(err), "--multi-release", "17", "-verbose:class",
        "-include", "dev\\.tidemark\\..*", ShippedJar.JAR.toString());
    assertEquals(0, code, err.toString());
    List<String> missing = out.toString().lines().filter(l -> l.contains("not found")).map(String::strip).toList();
    assertTrue(out.toString().contains("dev.tidemark.node.Main"), "jdeps read Tidemark's classes: " + out.toString().lines().limit(5).toList());
    assertEquals(List.of(), missing, "classes Tidemark's code refers to that the jar lacks");
  }
}
