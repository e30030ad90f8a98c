package dev.tidemark.testsupport;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Injects the JVM-wide {@link SharedInfra} into test constructors, {@code @BeforeAll}/{@code @BeforeEach} methods and
 * test methods.
 *
 * <pre>{@code
 * @ExtendWith(InfraExtension.class)
 * class QueryServiceIT {
 *   @BeforeAll static void up(SharedInfra infra) { infra.postgres().createDatabaseIfMissing("query_it"); }
 * }
 * }</pre>
 */
public final class InfraExtension implements ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(InfraExtension.class);

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == SharedInfra.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return sharedInfra(extensionContext);
  }

  /** The shared infrastructure, for other extensions that need it outside parameter injection. */
  public static SharedInfra sharedInfra(ExtensionContext context) {
    // The root store outlives every test class, and JUnit closes AutoCloseable values in it when the run ends.
    return context.getRoot().getStore(NAMESPACE)
        .getOrComputeIfAbsent(Lease.class, k -> new Lease(SharedInfra.acquire()), Lease.class)
        .infra;
  }

  private static final class Lease implements AutoCloseable {
    final SharedInfra infra;

    Lease(SharedInfra infra) {
      this.infra = infra;
    }

    @Override
    public void close() {
      infra.close();
    }
  }
}
