package dev.tidemark.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.lang.syntax.elements.ClassesShould;
import java.io.IOException;
import java.io.StringWriter;
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
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
 *
 * <p>The same reading holds the contract to what the roles say to each other, keeps keys, telemetry
 * and the node's runtime free of the roles, and leaves no Java source unread: the benchmarks in
 * {@code bench/} are read by source and, compiled here, by class.
 */
class ModuleBoundariesTest {

  private static final Path ROOT = Path.of(System.getProperty("tidemark.root", "..")).toAbsolutePath().normalize();
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
  private static final Pattern IMPL_IMPORT = Pattern.compile(
      "^import\\s+(?:static\\s+)?(dev\\.tidemark\\.\\w+)\\.impl\\b[\\w.*]*\\s*;", Pattern.MULTILINE);
  private static final String ANY_IMPL = "dev.tidemark.*.impl..";
  private static final String CONTRACT = "dev.tidemark.contract";
  /** Benchmarks outside the modules: single-file programs, run with {@code java bench/<Name>.java}. */
  private static final String BENCH = "bench";
  /** What the contract may not use: meters, traces and logging are module telemetry's, keys and signing module keys'. */
  private static final String[] NOT_IN_CONTRACT = {"io.micrometer..", "io.opentelemetry..", "org.slf4j..", "javax.crypto..", "java.security.."};
  /** Of {@code java.security}, the digest its fingerprints are made with and what looking one up may throw. */
  private static final String CONTRACT_DIGEST = "java\\.security\\.(MessageDigest|NoSuchAlgorithmException|GeneralSecurityException)";
  private static final Pattern DEPENDENCIES = Pattern.compile("<dependencies>.*?</dependencies>", Pattern.DOTALL);
  private static final Pattern CONTRACT_SOURCE_REACH = Pattern.compile(
      "\\b(dev\\.tidemark\\.(?!contract\\b)\\w+|io\\.micrometer|io\\.opentelemetry|org\\.slf4j|javax\\.crypto)\\.[\\w.*]+");

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
   * test class of {@code command-service} may: {@code CommandRole} deploys the query role beside the
   * command role, as a node runs them, whose read tools look at what a change did.
   */
  @Test
  void neitherServiceUsesTheOther() {
    List<String> failures = new ArrayList<>();
    String[][] pairs = {{"query-service", "dev.tidemark.command..", null},
        {"command-service", "dev.tidemark.query..", "dev.tidemark.command.CommandRole"}};
    for (String[] pair : pairs) {
      JavaClasses classes = new ClassFileImporter().importPaths(classFolders(pair[0]));
      assertTrue(classes.size() > 10, "imported only " + classes.size() + " classes of " + pair[0]);
      ClassesShould should = pair[2] == null ? noClasses().should() : noClasses().that().doNotHaveFullyQualifiedName(pair[2]).should();
      EvaluationResult result = should.dependOnClassesThat(resideInAPackage(pair[1]))
          .as("no class of module " + pair[0] + " uses " + pair[1] + " (what both need belongs in module database)")
          .evaluate(classes);
      if (result.hasViolation()) {
        failures.add(result.getFailureReport().toString());
      }
    }
    assertTrue(failures.isEmpty(), String.join("\n", failures));
  }

  /**
   * The benchmarks in {@code bench/} are compiled by nobody but {@code java} when they run, so that
   * a reference the source check cannot see (a fully qualified name) would go unseen: here each is
   * compiled on its own, as {@code java bench/<Name>.java} compiles it, against every module's
   * classes, and its classes are held to the rule of a user's program: no module's impl.
   */
  @Test
  void benchmarkClassesUseNoModulesImpl(@TempDir Path out) throws IOException {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertTrue(javac != null, "no Java compiler in " + System.getProperty("java.home") + ": run the tests on a JDK");
    List<Path> sources = javaFiles(ROOT.resolve(BENCH));
    assertTrue(!sources.isEmpty(), "no benchmark sources under " + ROOT.resolve(BENCH));
    List<String> failures = new ArrayList<>();
    for (Path source : sources) {
      Path classes = Files.createDirectories(out.resolve(source.getFileName().toString().replace(".java", "")));
      StringWriter messages = new StringWriter();
      boolean compiled = javac.getTask(messages, null, null,
          List.of("-proc:none", "-nowarn", "-d", classes.toString(), "-cp", System.getProperty("java.class.path")),
          null, javac.getStandardFileManager(null, null, null).getJavaFileObjects(source)).call();
      assertTrue(compiled, ROOT.relativize(source) + " does not compile against the modules:\n" + messages);
      JavaClasses imported = new ClassFileImporter().importPath(classes);
      assertTrue(imported.size() > 0, "no classes compiled from " + source);
      EvaluationResult result = noClasses().should().dependOnClassesThat(resideInAPackage(ANY_IMPL))
          .as("no class of " + ROOT.relativize(source) + " uses a module's impl").evaluate(imported);
      if (result.hasViolation()) {
        failures.add(result.getFailureReport().toString());
      }
    }
    assertTrue(failures.isEmpty(), String.join("\n", failures));
  }

  /**
   * Every Java source sits where the checks above read it: in a module of the root pom, under
   * {@code src/main/java} or {@code src/test/java} (read by source, and by class from its target/
   * folders), or in {@code bench/} (read by source, and by class once compiled). A source anywhere
   * else would be checked by neither.
   */
  @Test
  void everyJavaSourceIsWhereTheChecksReadIt() throws IOException {
    List<Path> checked = new ArrayList<>();
    for (String module : modules()) {
      checked.add(ROOT.resolve(module).resolve("src/main/java"));
      checked.add(ROOT.resolve(module).resolve("src/test/java"));
    }
    checked.add(ROOT.resolve(BENCH));
    List<String> outside = new ArrayList<>();
    int seen = 0;
    try (Stream<Path> files = Files.walk(ROOT)) {
      for (Path source : files.filter(p -> p.toString().endsWith(".java") && !generated(p)).toList()) {
        seen++;
        if (checked.stream().noneMatch(source::startsWith)) {
          outside.add(ROOT.relativize(source).toString());
        }
      }
    }
    assertTrue(seen > 100, "saw only " + seen + " Java sources under " + ROOT);
    assertTrue(outside.isEmpty(), "Java sources that no boundary check reads (move them into a module's src/main/java or"
        + " src/test/java, or into bench/):\n" + String.join("\n", outside));
  }

  /**
   * The contract is what the roles say to each other (addresses, message shapes, error codes, wire
   * strings), so it depends on no other Tidemark module and holds no meters, traces, logging or keys:
   * those are modules {@code telemetry} and {@code keys}, which depend on it. Checked in its pom, its
   * sources (a constant's import leaves no trace in a class file) and its classes (a fully
   * qualified name needs no import); and no other module puts a class in the contract's package.
   */
  @Test
  void theContractDependsOnNoOtherModuleAndHoldsNoTelemetryOrKeys() throws IOException {
    Matcher dependencies = DEPENDENCIES.matcher(Files.readString(ROOT.resolve("contract/pom.xml")));
    String declared = dependencies.find() ? dependencies.group() : "";
    for (String group : List.of("dev.tidemark", "io.micrometer", "io.opentelemetry", "org.slf4j")) {
      assertTrue(!declared.contains("<groupId>" + group + "</groupId>"), "contract/pom.xml depends on " + group
          + ": the contract depends on no other module, and meters, traces and logging are module telemetry's");
    }
    List<String> violations = new ArrayList<>();
    for (Path source : javaFiles(ROOT.resolve("contract/src"))) {
      Matcher m = CONTRACT_SOURCE_REACH.matcher(Files.readString(source));
      while (m.find()) {
        violations.add(ROOT.relativize(source) + ": " + m.group());
      }
    }
    for (String module : modules()) {
      if (!module.equals("contract") && ownRoots(module).contains(CONTRACT)) {
        violations.add(module + " declares classes in " + CONTRACT + ": only module contract does");
      }
    }
    JavaClasses classes = new ClassFileImporter().importPaths(classFolders("contract"));
    assertTrue(classes.size() > 10, "imported only " + classes.size() + " classes of contract");
    EvaluationResult others = noClasses().should().dependOnClassesThat(
            resideInAPackage("dev.tidemark..").and(not(resideInAPackage(CONTRACT + ".."))))
        .as("no class of module contract uses another Tidemark module").evaluate(classes);
    EvaluationResult telemetryOrKeys = noClasses().should().dependOnClassesThat(
            resideInAnyPackage(NOT_IN_CONTRACT).and(not(nameMatching(CONTRACT_DIGEST))))
        .as("no class of module contract uses meters, traces, logging, keys or signing (modules telemetry and keys)")
        .evaluate(classes);
    for (EvaluationResult result : List.of(others, telemetryOrKeys)) {
      if (result.hasViolation()) {
        violations.add(result.getFailureReport().toString());
      }
    }
    assertTrue(violations.isEmpty(), "the contract reaches beyond the contract (move what it needs into it, or the"
        + " class into the module it belongs to):\n" + String.join("\n", violations));
  }

  /**
   * Keys, telemetry and the node's runtime are used by the roles and by each other's users, and use
   * nothing of theirs: each depends on the contract at most, so that no role is pulled in with them.
   */
  @Test
  void keysTelemetryAndRuntimeUseNoModuleButTheContract() {
    List<String> failures = new ArrayList<>();
    for (String module : List.of("keys", "telemetry", "runtime")) {
      JavaClasses classes = new ClassFileImporter().importPaths(classFolders(module));
      assertTrue(classes.size() > 0, "imported no classes of " + module);
      String own = "dev.tidemark." + module + "..";
      EvaluationResult result = noClasses().should().dependOnClassesThat(
              resideInAPackage("dev.tidemark..").and(not(resideInAnyPackage(own, CONTRACT + ".."))))
          .as("no class of module " + module + " uses a Tidemark module but " + module + " and contract").evaluate(classes);
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

  /** Under a build's output, a dependency's install or a hidden folder: not Tidemark's sources. */
  private static boolean generated(Path file) {
    for (Path part : ROOT.relativize(file)) {
      String name = part.toString();
      if (name.equals("target") || name.equals("node_modules") || name.startsWith(".")) {
        return true;
      }
    }
    return false;
  }

  private static List<Path> javaFiles(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(p -> p.toString().endsWith(".java") && !generated(p)).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
