// Benchmark, not a test: run by bench/argument-check.sh from the gateway's test classes. It sits in
// the package of what it times, so that no class outside the gateway reaches into its impl; the
// build compiles it with the tests and never runs it (it is no *Test or *IT).
//
// Times Tidemark's own argument check (ArgumentValidator.faults: the depth and NUL walk and the
// tool's compiled SchemaCheck, which vertx-json-schema backs for arguments that may not fit) on one thread, on the arguments of a get_row and of
// an insert_rows of ten rows, as the gateway runs it on every tools/call; beside it, in the same
// rounds, vertx-json-schema's check of the same schema alone, which was the whole check before the
// schemas were compiled. Prints nanoseconds per check for each of several rounds: the first rounds
// include the JIT compiler's work.
//
// Usage: bench/argument-check.sh [rounds] [checks-per-round]
package dev.tidemark.gateway.impl.tool;

import dev.tidemark.contract.ToolCatalog;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputFormat;
import io.vertx.json.schema.Validator;
import java.util.function.IntFunction;

public class ArgumentCheckBench {

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    int checks = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    ArgumentValidator validator = ArgumentValidator.forTools(ToolCatalog.all());
    IntFunction<JsonObject> getRow = i -> new JsonObject().put("table", "customers").put("key", 1 + i % 500);
    IntFunction<JsonObject> insertRows = i -> {
      JsonArray rows = new JsonArray();
      for (int r = 0; r < 10; r++) {
        rows.add(new JsonObject().put("name", "customer " + i + "-" + r).put("email", "c" + i + "-" + r + "@example.com"));
      }
      return new JsonObject().put("table", "customers").put("rows", rows);
    };
    Validator getRowSchema = general("get_row");
    Validator insertRowsSchema = general("insert_rows");
    for (int round = 1; round <= rounds; round++) {
      System.out.printf("[bench] round %d: get_row %,d ns per check, insert_rows (10 rows) %,d ns per check;"
              + " vertx-json-schema alone: get_row %,d ns, insert_rows %,d ns%n",
          round, time(validator, "get_row", getRow, checks), time(validator, "insert_rows", insertRows, checks / 5),
          time(getRowSchema, getRow, checks), time(insertRowsSchema, insertRows, checks / 5));
    }
  }

  private static Validator general(String tool) {
    return Validator.create(JsonSchema.of(ToolCatalog.find(tool).orElseThrow().inputSchema().copy()),
        new JsonSchemaOptions().setDraft(Draft.DRAFT202012).setBaseUri("https://tidemark.dev/schemas/").setOutputFormat(OutputFormat.Basic));
  }

  static long time(Validator validator, IntFunction<JsonObject> arguments, int checks) {
    long refused = 0;
    long started = System.nanoTime();
    for (int i = 0; i < checks; i++) {
      refused += Boolean.TRUE.equals(validator.validate(arguments.apply(i)).getValid()) ? 0 : 1;
    }
    long perCheck = (System.nanoTime() - started) / checks;
    if (refused != 0) {
      throw new IllegalStateException("vertx-json-schema refused arguments the benchmark means to be valid");
    }
    return perCheck;
  }

  static long time(ArgumentValidator validator, String tool, IntFunction<JsonObject> arguments, int checks) {
    long faults = 0;
    long started = System.nanoTime();
    for (int i = 0; i < checks; i++) {
      faults += validator.faults(tool, arguments.apply(i)).size();
    }
    long perCheck = (System.nanoTime() - started) / checks;
    if (faults != 0) {
      throw new IllegalStateException(tool + "'s arguments were refused: the benchmark measures the check of valid ones");
    }
    return perCheck;
  }
}
