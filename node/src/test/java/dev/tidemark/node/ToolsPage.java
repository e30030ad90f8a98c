package dev.tidemark.node;

import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Renders docs/reference/tools.md from the tool contract (the JSON files of the contract module),
 * so the page and the contract cannot drift: ToolsPageTest fails when they differ. Regenerate with
 * {@code ./mvnw -q -pl node -am test -Dtest=ToolsPageTest -Dtidemark.regenerate-docs=true -Dsurefire.failIfNoSpecifiedTests=false}.
 */
final class ToolsPage {

  private static final String INTRO = """
      # Tools

      <!-- Generated from the tool contract (contract/src/main/resources/dev/tidemark/contract/tools/*.json)
           by node/src/test/java/dev/tidemark/node/ToolsPage.java; ToolsPageTest fails when this page and the
           contract differ. Do not edit by hand: change the JSON files and regenerate. -->

      This version serves these tools, in the order `tools/list` shows them:
      %s. Each tool is declared once, in a JSON file of the contract module, with its input schema,
      output schema and annotations; what `tools/list` returns is read from those files, and so is this page.

      The read tools are read-only. The change tools (`insert_rows`, `update_rows`, `delete_rows`,
      `execute`, `transaction`, and `restore_rows` and `undo_transaction`, which write rows back as the
      changelog recorded them, and `migrate`, for schema changes, which only the roles of
      `command.migrate-roles` see) plan a change before they make it; [change-tools.md](../change-tools.md)
      describes the plan/commit flow, plan ids, idempotency keys and their errors. A read-only caller
      does not see the change tools, and calling one by name is answered with JSON-RPC code -32602,
      as for any unknown tool.

      Every change tool plans unless it is given a `plan_id`: the change runs as the caller's role in a
      transaction that is rolled back, and the result says what it would do (rows per table and
      operation, cascades and triggers included, sample before/after images) with a `plan_id`;
      nothing is written. To commit, the caller calls again with the same arguments, the `plan_id`
      and an `idempotency_key` (and `confirm: true` when `confirmation_required` is true, after the
      user agreed to a change that removes data or to a `where` that matches every row); the change
      is made only if every row the plan touched is still as it was, otherwise `PLAN_CHANGED`. A
      retry with the same `idempotency_key` and arguments returns the stored outcome and changes
      nothing again. The other tools of Tidemark's design are not available yet (see
      [architecture.md](../architecture.md#not-built-yet)).

      Besides these, each database may serve tools its team defines in configuration: named,
      parameterised reads and changes whose SQL no agent can change, shown only to the roles they name
      ([named-tools.md](../guides/named-tools.md)). A named read tool takes its parameters and `cursor`
      and answers as `query` does; a named change tool takes its parameters, `plan_id`, `confirm`,
      `idempotency_key` and, when an events consumer offers it as a reaction, `causation_token`, and
      answers as `execute` does.

      ## How every tool behaves

      - **Closed input schemas.** Every input schema is JSON Schema 2020-12 (the dialect MCP assumes
        when a schema names none, so none names it) with
        `additionalProperties: false`: an argument the tool does not know is refused, never
        ignored. `tools/list` shows each input schema without `additionalProperties: false`, string
        lengths (`minLength`, `maxLength`) and `uniqueItems`, which only refuse what no model sends and
        cost every connection tokens; the gateway still checks every argument against the whole schema
        that the tables below give. Arguments that do not fit are answered with the tool error `INVALID_ARGUMENTS`,
        which lists every fault with a JSON Pointer and what was expected (see
        [errors.md](errors.md#tool-errors)). Errors found later (an unknown column, a value that
        does not fit its column) name the argument in `argument`. `arguments` may be left out when a tool takes none.
      - **Structured results.** Every tool declares an `outputSchema` and answers with
        `structuredContent` that fits it. Field names are snake_case. An optional field is
        absent rather than null. The result tables below give every field's meaning; the
        `outputSchema` that `tools/list` shows carries the top level only (each field's type,
        the required fields, enums, and the item type of an array of scalars, but nothing of what a field holds
        inside), leaves objects open so that a field added later never fails a client that
        cached the schema, and admits the error result too. The tables below describe every
        level, and Tidemark's tests check each result against all of them.
      - **Errors.** A tool that fails answers `isError: true` with `structuredContent` =
        `{"error": {"code", "message", ...details}}` and nothing else; every `outputSchema` admits
        that shape (`anyOf` the result's required fields or `error`), because the official
        TypeScript SDK checks `structuredContent` against the `outputSchema` even on errors.
        [errors.md](errors.md#tool-errors) lists the codes and details.
      - **Short descriptions.** A tool's description in `tools/list` says when to use it and what
        to do next; the paragraph after it on this page says how it behaves in detail. The input
        schemas leave out what an argument means when its name, its schema and the tool's
        description say enough; the meaning column of the tables below says it.
      - **Text and structured content, each complete on its own.** A host gives the model one of the
        two, never both: VS Code and Claude Code give it the serialized `structuredContent`, Claude
        Desktop, claude.ai and most frameworks (LangChain among them) the text content. So every
        result that carries rows carries them in the text content and in `structuredContent`, each
        complete on its own, and so does every cursor, plan id or lease token a model needs to go on.
        Token budgets count each form alone, never their sum
        ([performance.md](../performance.md#agent-tasks-calls-and-tokens-against-dbhub-and-mcp-toolbox)).
      - **The text content.** It opens with one line that says how the call ended, with what a model
        needs to go on: `next_cursor` as `pass cursor <cursor>` (`query`, `list_rows`, `list_tables`, a
        named read), `next_cursor <cursor>` (`changes_since`), `cursor <cursor>` (`watch`), `changelog_head <cursor>`
        (`status`), `lease_token <token>` with its expiry (`events_next`, once for the batch), a
        plan's `plan_id` with its expiry and whether committing needs the user's consent, and for
        `query` the columns with their types (`columns: id int4, status order_status`; a type of the
        database's own, such as an enum, by its name on PostgreSQL 16 or later and as `unknown` on
        15), also when a page has no rows. A result that
        carries rows follows that line with the rows between a `BEGIN-<nonce>` line and an
        `END-<nonce>` line, one fence per result: first a JSON array of the column names, then one
        JSON array of values a row, in the same order (null where a row lacks a name). JSON escapes
        keep every value on its line. The nonce is 8 random hexadecimal digits, new for every result,
        and occurs nowhere else in the result, so text stored in the database (a comment, a
        customer's message) can neither close the fence nor pass itself off as Tidemark's own words.
        A result with rows of several kinds puts them in the one fence as blocks, each with its own
        names line, an empty line between two: `describe_table` its tables (`table`, `kind`,
        `primary_key`, `row_level_security`, `estimated_rows`, `comment`), their columns (`column`,
        `type`, `nullable`, `default`, `comment`, `labels`), foreign keys out (`foreign_key`,
        `columns`, `references`, `referenced_columns`, `on_update`, `on_delete`) and in
        (`referenced_by` first), indexes (`index`, `unique`, `primary`, `definition`) and checks
        (`check`, `definition`), each row led by `table` when the call described several; `status`
        its `capture_problems`, the `proposal` asked for and `named_tools` when it has them; a change
        tool's plan one row per table and operation (`table`, `op`, `rows`, and `keys`: the keys of
        the rows it updates or deletes, up to 20, a one-column key as its value), then the rows its
        statement returned (`returning`) and what the tool reports in rows of its own. A plan's rows
        themselves are in its `samples` and, when the user is asked, in the question
        ([change-tools.md](../change-tools.md#removals-need-consent)); its text names the rows by key.
        No field of the rows is repeated in the first line. The structured content carries the same
        values as plain JSON, mapped as [types.md](types.md) says.
      - **Read-only, as the caller.** Every read tool runs in a `READ ONLY` transaction that is always
        rolled back, on a connection that logged in as the caller's PostgreSQL role, with the statement timeout
        `database.statement-timeout-ms` (5000 ms by default; past it the call ends with `TIMEOUT`).
        After the rollback the connection's session is reset (`DISCARD ALL`), so nothing a call does
        (a setting, an advisory lock, a prepared statement, a temporary table, a `LISTEN`) reaches
        the next call. What a caller sees is what that role may read ([security.md](../security.md)).
        Tidemark's own schema, `tidemark`, is never served: `get_row`, `list_rows` and
        `describe_table` answer `NOT_FOUND` for its tables, and a statement that reads one is
        `PERMISSION_DENIED`.
      - **Tables.** A `table` argument is `name` or `schema.name`; a bare name is looked up in the
        schemas of `database.schemas`, in that order. A table that does not exist, is not served or
        that the caller's role may not read is `NOT_FOUND`.
      - **Limits.** Arrays and objects in a tool's arguments nest at most 32 levels deep (deeper is
        `INVALID_ARGUMENTS`, naming the first pointer past it). A page holds 200 rows unless `limit` says otherwise, and at most 10,000 (more is
        `INVALID_ARGUMENTS`). A page of `query` or `list_rows` also holds at most 100,000 bytes of row
        JSON (about 25,000 tokens, so that a page fits a model's context window with room to spare)
        unless `max_bytes` asks for more, up to 4,194,304 (4 MiB). The page ends before the row that
        would pass that budget and says `truncated: true`; `next_cursor` continues with that row, so
        that paging returns every row exactly once. The budget counts the rows' JSON, which the text
        and the structured content each carry once. A single row larger than `max_bytes` is
        `LIMIT_EXCEEDED` with `argument: "max_bytes"` (pass a larger `max_bytes`, or select fewer or
        smaller columns); a row larger than 4 MiB is `LIMIT_EXCEEDED` from `query`, `list_rows` and `get_row`.
        Rows are read from PostgreSQL a few at a time, so a call holds little more than its page
        (see [performance.md](../performance.md#memory-per-call)).
      - **Cursors.** `next_cursor` is absent on the last page. A cursor is opaque: sealed with the
        database's key ring, so its content cannot be read or altered. It works on any node, only
        for the caller it was issued to (another caller's cursor is `INVALID_CURSOR`), belongs to one call's arguments (the same `sql` and
        `params`, or the same `table`, `where`, `order` and `columns`; otherwise `INVALID_CURSOR`),
        and expires 24 hours after its first page (`CURSOR_EXPIRED`). A cursor records the tables
        its statement reads and the change position of its first page, so that a page never mixes
        two states: once a table it reads has changed since the first page, the next page is
        `CURSOR_STALE`.
      - **Tasks.** A client that declares the `io.modelcontextprotocol/tasks` extension may get a
        task instead of a result where the call waits ([tasks.md](tasks.md)): a commit that became a
        proposal answers with a task that completes when a person decides, and a call of `query`,
        `explain` with `analyze`, `migrate` or `restore_rows` that runs longer than
        `tasks.promote-after-ms` (1 s by default) goes on as a task. These tools say so in `tools/list`
        with `execution: {"taskSupport": "optional"}`, and their sections below with a **Tasks** line;
        every other tool answers with its result, whatever the client declares. A client that declares
        nothing never gets a task.
      - **Annotations.** Every read tool is annotated `readOnlyHint: true`, `destructiveHint: false`,
        `idempotentHint: true` and `openWorldHint: false`; every change tool `readOnlyHint: false`,
        `destructiveHint: true` (each can remove or rewrite rows, if only through a cascade or a
        trigger) and `idempotentHint: false` (a retry is made safe by `idempotency_key`, not by the
        tool). The events tools change no row: `events_next` and `events_status` are annotated
        `readOnlyHint: true` (`events_next` is not idempotent: it leases), `events_ack`, `events_nack`
        and `events_seek` `readOnlyHint: false` and `destructiveHint: false`. `tools/list` leaves out
        a hint that MCP's default already gives (`readOnlyHint: false`, `destructiveHint: true`,
        `idempotentHint: false`, `openWorldHint: true`), and `destructiveHint` and `idempotentHint`
        beside `readOnlyHint: true`, which MCP reads only when a tool is not read-only. A tool's
        title is its top-level `title`; the annotations do not repeat it.
      """;

  /** The tools whose call goes on as a task when it runs long, beside the change tools' proposals. */
  private static final List<String> LONG_RUNNING = List.of("query", "explain", "migrate", "restore_rows");

  /** What the page says of a tool that may answer with a task, for a client that declared the tasks extension. */
  private static String tasks(ToolDescriptor tool) {
    StringBuilder line = new StringBuilder("**Tasks:** ").append(tool.taskSupport()).append(" (`execution.taskSupport`).");
    if (LONG_RUNNING.contains(tool.name())) {
      line.append(" For a client that declared the tasks extension, a call").append("explain".equals(tool.name()) ? " with `analyze: true`" : "")
          .append(" still running after `tasks.promote-after-ms` answers with a task: its statement runs on, `tasks/cancel` stops it,"
              + " and `tasks/get` answers with the result ([tasks.md](tasks.md#a-call-that-runs-long)).");
    }
    if (tool.service() == dev.tidemark.contract.Service.COMMAND) {
      line.append(" A commit that becomes a proposal answers").append(LONG_RUNNING.contains(tool.name()) ? "" : ", for a client that declared the tasks extension,")
          .append(" with a task that completes when a person decides: with the commit's result once approved, with a tool error that"
              + " carries the reason otherwise ([tasks.md](tasks.md#a-change-that-became-a-proposal)).");
    }
    return line.toString();
  }

  /** Arguments that mean the same for every tool, described here rather than in each tools/list entry. */
  private static final Map<String, String> SHARED_ARGUMENTS =
      Map.of("table", "The table or view, as `name` or `schema.name` (see Tables above).",
          "max_bytes", "The most bytes of row JSON on this page (see Limits above).");

  private ToolsPage() {}

  static Path file() {
    Path here = Path.of("").toAbsolutePath();
    Path root = Files.isDirectory(here.resolve("docs")) ? here : here.getParent();
    return root.resolve("docs/reference/tools.md");
  }

  static String render() {
    StringBuilder page = new StringBuilder();
    List<ToolDescriptor> tools = ToolCatalog.all();
    page.append(String.format(INTRO, tools.stream().map(t -> "[`" + t.name() + "`](#" + t.name() + ")").collect(Collectors.joining(", "))));
    for (ToolDescriptor tool : tools) {
      page.append("\n## `").append(tool.name()).append("`\n\n");
      page.append("**").append(tool.title()).append(".** ").append(tool.description()).append("\n\n");
      if (!tool.reference().isBlank()) {
        page.append(tool.reference()).append("\n\n");
      }
      if (!ToolDescriptor.TASKS_FORBIDDEN.equals(tool.taskSupport())) {
        page.append(tasks(tool)).append("\n\n");
      }
      page.append("### Arguments\n\n");
      JsonObject props = tool.inputSchema().getJsonObject("properties", new JsonObject());
      if (props.isEmpty()) {
        page.append("None. The input schema has no properties; any argument is refused.\n\n");
      } else {
        List<String> required = strings(tool.inputSchema().getJsonArray("required"));
        page.append("| argument | type | required | rule | meaning |\n| --- | --- | --- | --- | --- |\n");
        for (String name : props.fieldNames()) {
          JsonObject p = props.getJsonObject(name);
          page.append("| `").append(name).append("` | ").append(type(p, tool.inputSchema())).append(" | ")
              .append(required.contains(name) ? "yes" : "no").append(" | ").append(rule(p)).append(" | ")
              .append(cell(meaning(tool, name, p))).append(" |\n");
        }
        page.append('\n');
      }
      page.append("### Result\n\n");
      page.append("| field | type | always | meaning |\n| --- | --- | --- | --- |\n");
      fields(tool.resultSchema(), tool.resultSchema(), "", true, page);
      page.append('\n');
      example(tool.name(), page);
    }
    return page.toString();
  }

  /**
   * The tool's example, when its contract declares one: the arguments of a call on the demo
   * database and the structuredContent it answers, which a test of the module that runs the tool
   * checks (list_tables: ListTablesSearchIT).
   */
  private static void example(String tool, StringBuilder page) {
    try (java.io.InputStream in = ToolsPage.class.getResourceAsStream("/dev/tidemark/contract/tools/" + tool + ".json")) {
      JsonObject example = new JsonObject(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)).getJsonObject("example");
      if (example != null) {
        page.append("### Example\n\nOn the demo database, the arguments\n\n```json\n").append(example.getJsonObject("arguments").encode())
            .append("\n```\n\nanswer with this `structuredContent`:\n\n```json\n").append(example.getJsonObject("structuredContent").encode())
            .append("\n```\n\n");
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** What the page says of an argument: its schema's description, else the tool's reference for it, else the shared text. */
  private static String meaning(ToolDescriptor tool, String name, JsonObject property) {
    return property.getString("description", tool.argumentReference().getString(name, SHARED_ARGUMENTS.getOrDefault(name, "")));
  }

  private static void fields(JsonObject root, JsonObject schema, String prefix, boolean parentAlways, StringBuilder page) {
    JsonObject props = schema.getJsonObject("properties", new JsonObject());
    List<String> required = strings(schema.getJsonArray("required"));
    for (String name : props.fieldNames()) {
      JsonObject p = props.getJsonObject(name);
      String path = prefix + name;
      boolean always = parentAlways && required.contains(name);
      page.append("| `").append(path).append("` | ").append(type(p, root)).append(" | ").append(always ? "yes" : "no")
          .append(" | ").append(cell(p.getString("description", ""))).append(" |\n");
      if ("object".equals(p.getValue("type")) && p.containsKey("properties")) {
        fields(root, p, path + ".", always, page);
      }
      JsonObject items = p.getJsonObject("items");
      if ("array".equals(p.getValue("type")) && items != null && items.containsKey("properties")) {
        fields(root, items, path + "[].", always, page);
      }
    }
  }

  private static String type(JsonObject p, JsonObject root) {
    if (p.containsKey("$ref")) {
      String def = p.getString("$ref").substring("#/$defs/".length());
      JsonObject target = root.getJsonObject("$defs").getJsonObject(def);
      return "filter".equals(def) ? "filter (object)" : type(target, root) + enumRule(target);
    }
    Object t = p.getValue("type");
    String base = t instanceof JsonArray a ? String.join(" or ", strings(a)) : t == null ? "any JSON value" : String.valueOf(t);
    if ("array".equals(t) && p.getJsonObject("items") != null) {
      JsonObject items = p.getJsonObject("items");
      Object it = items.getValue("type");
      if (it != null) {
        base = "array of " + (it instanceof JsonArray a ? String.join(" or ", strings(a)) : it) + (it.equals("object") ? "s" : "s");
      }
    }
    return base;
  }

  private static String enumRule(JsonObject p) {
    return p.containsKey("enum") ? ": " + strings(p.getJsonArray("enum")).stream().map(e -> "`" + e + "`").collect(Collectors.joining(", ")) : "";
  }

  private static String rule(JsonObject p) {
    List<String> rules = new ArrayList<>();
    if (p.containsKey("minLength") || p.containsKey("maxLength")) {
      rules.add(p.getValue("minLength", 0) + " to " + p.getValue("maxLength", "any number of") + " characters");
    }
    if (p.containsKey("minimum") || p.containsKey("maximum")) {
      rules.add(p.getValue("minimum", "any") + " to " + p.getValue("maximum", "any"));
    }
    if (p.containsKey("minItems") || p.containsKey("maxItems")) {
      rules.add(p.getValue("minItems", 0) + " to " + p.getValue("maxItems", "any number of") + " items");
    } else if ("array".equals(p.getValue("type"))) {
      rules.add("any number of items");
    }
    if (p.containsKey("enum")) {
      rules.add("one of " + strings(p.getJsonArray("enum")).stream().map(e -> "`" + e + "`").collect(Collectors.joining(", ")));
    }
    if (p.containsKey("default")) {
      rules.add("default `" + p.getValue("default") + "`");
    }
    return rules.isEmpty() ? "" : String.join("; ", rules);
  }

  private static String cell(String text) {
    return text.replace("|", "\\|").replace("\n", " ");
  }

  private static List<String> strings(JsonArray a) {
    return a == null ? List.of() : a.stream().map(String::valueOf).toList();
  }

  static void write() throws IOException {
    Files.writeString(file(), render(), StandardCharsets.UTF_8);
  }
}
