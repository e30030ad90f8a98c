package dev.tidemark.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.EvaluationResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No module reaches into another module's {@code impl}: a module's public types live at its package
 * root, and its {@code impl} packages are for the module itself, its tests included. What a second
 * module needs is moved to the package root or reached through a public factory.
 *
 * <p>Checked twice, because each way misses what the other sees: in the sources (a compile-time
 * constant is copied into the class that uses it, so its import leaves no trace in the class files)
 * and in the class files (a fully qualified name needs no import). Every module of the root pom is
 * read from its own folders, so this checks what the reactor built before it: run it through the
 * reactor ({@code ./mvnw verify}, or {@code ./mvnw -pl architecture -am verify}).
 */
class ModuleBoundariesTest {

  private static final Path ROOT = Path.of(System.getProperty("tidemark.root", "..")).toAbsolutePath().normalize();
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
  private static final Pattern IMPL_IMPORT = Pattern.compile(
      "^import\\s+(?:static\\s+)?(dev\\.tidemark\\.\\w+)\\.impl\\b[\\w.*]*\\s*;", Pattern.MULTILINE);
  private static final String ANY_IMPL = "dev.tidemark.*.impl..";

  @Test
  void noModuleImportsAnotherModulesImpl() throws IOException {
    List<String> violations = new ArrayList<>();
    int read = 0;
    for (String module : modules()) {
      Set<String> own = ownRoots(module);
      for (Path source : javaFiles(ROOT.resolve(module).resolve("src"))) {
        read++;
        Matcher m = IMPL_IMPORT.matcher(Files.readString(source));
        while (m.find()) {
          if (!own.contains(m.group(1))) {
            violations.add(ROOT.relativize(source) + ": " + m.group().trim());
          }
        }
      }
    }
    // the benchmarks are built against the modules from outside, as a user's program would be: no impl of any
    for (Path source : javaFiles(ROOT.resolve("bench"))) {
      read++;
      Matcher m = IMPL_IMPORT.matcher(Files.readString(source));
      while (m.find()) {
        violations.add(ROOT.relativize(source) + ": " + m.group().trim());
      }
    }
    assertTrue(read > 100, "read only " + read + " source files under " + ROOT);
    assertTrue(violations.isEmpty(), "imports of another module's impl (move the type to that module's package root,"
        + " or give it a public factory there):\n" + String.join("\n", violations));
  }

  @Test
  void noModuleClassUsesAnotherModulesImpl() {
    List<String> failures = new ArrayList<>();
    int imported = 0;
    for (String module : modules()) {
      List<Path> folders = classFolders(module);
      if (folders.isEmpty()) {
        continue;
      }
      JavaClasses classes = new ClassFileImporter().importPaths(folders);
      imported += classes.size();
      Set<String> own = ownRoots(module);
      DescribedPredicate<JavaClass> othersImpl = own.isEmpty() ? resideInAPackage(ANY_IMPL)
          : resideInAPackage(ANY_IMPL).and(not(resideInAnyPackage(own.stream().map(r -> r + "..").toArray(String[]::new))));
      EvaluationResult result = noClasses().should().dependOnClassesThat(othersImpl)
          .as("no class of module " + module + " uses another module's impl")
          .allowEmptyShould(true)
          .evaluate(classes);
      if (result.hasViolation()) {
        failures.add(result.getFailureReport().toString());
      }
    }
    assertTrue(imported > 100, "imported only " + imported + " classes under " + ROOT);
    assertTrue(failures.isEmpty(), String.join("\n", failures));
  }

  /**
   * Reads and writes share one database layer (module {@code database}), so that both become the
   * caller the same way; neither service reaches into the other, at its root or in its impl. One
   * test class of each may: the one that deploys its module's role for the tests over MCP, with the
   * other role beside it as a node runs them ({@code CommandRole} deploys the query role, whose read
   * tools look at what a change did).
   */
  @Test
  void neitherServiceUsesTheOther() {
    List<String> failures = new ArrayList<>();
    String[][] pairs = {{"query-service", "dev.tidemark.command..", "dev.tidemark.query.QueryRole"},
        {"command-service", "dev.tidemark.query..", "dev.tidemark.command.CommandRole"}};
    for (String[] pair : pairs) {
      JavaClasses classes = new ClassFileImporter().importPaths(classFolders(pair[0]));
      assertTrue(classes.size() > 10, "imported only " + classes.size() + " classes of " + pair[0]);
      EvaluationResult result = noClasses().that().doNotHaveFullyQualifiedName(pair[2])
          .should().dependOnClassesThat(resideInAPackage(pair[1]))
          .as("no class of module " + pair[0] + " uses " + pair[1] + " (what both need belongs in module database)")
          .evaluate(classes);
      if (result.hasViolation()) {
        failures.add(result.getFailureReport().toString());
      }
    }
    assertTrue(failures.isEmpty(), String.join("\n", failures));
  }

  /** The modules of the root pom, as folder names. */
  private static List<String> modules() {
    try {
      Matcher m = MODULE.matcher(Files.readString(ROOT.resolve("pom.xml")));
      List<String> modules = new ArrayList<>();
      while (m.find()) {
        modules.add(m.group(1).trim());
      }
      assertTrue(modules.size() > 5, "no modules in " + ROOT.resolve("pom.xml"));
      return modules;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The package roots ({@code dev.tidemark.<name>}) that a module's main sources declare: their impl is the module's own. */
  private static Set<String> ownRoots(String module) {
    Set<String> roots = new TreeSet<>();
    for (Path source : javaFiles(ROOT.resolve(module).resolve("src/main/java"))) {
      try {
        Matcher m = PACKAGE.matcher(Files.readString(source));
        if (m.find()) {
          String[] parts = m.group(1).split("\\.");
          if (parts.length >= 3) {
            roots.add(parts[0] + "." + parts[1] + "." + parts[2]);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return roots;
  }

  /** The compiled main and test classes of a module; a module with sources but no classes was not built first. */
  private static List<Path> classFolders(String module) {
    List<Path> folders = new ArrayList<>();
    for (String[] pair : new String[][] {{"src/main/java", "target/classes"}, {"src/test/java", "target/test-classes"}}) {
      Path sources = ROOT.resolve(module).resolve(pair[0]);
      Path classes = ROOT.resolve(module).resolve(pair[1]);
      if (Files.isDirectory(sources)) {
        assertTrue(Files.isDirectory(classes), classes + " is missing: build " + module + " first (run this through the reactor)");
        folders.add(classes);
      }
    }
    return folders;
  }

  private static List<Path> javaFiles(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
