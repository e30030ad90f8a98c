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

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == SharedInfra.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return sharedInfra(extensionContext);
  }

  /**
   * The shared infrastructure, for other extensions that need it outside parameter injection. It
   * lives as long as the JVM and its shutdown hook stops it: a test JVM that takes its classes one
   * at a time (failsafe with several forks runs each class as a JUnit run of its own) would
   * otherwise start PostgreSQL and Kafka again for every class.
   */
  public static SharedInfra sharedInfra(ExtensionContext context) {
    return SharedInfra.acquire();
  }
}
