package dev.tidemark.contract;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A tool a team defines in configuration ({@code database.tools}): one SQL statement with
 * placeholders {@code $1...}, typed parameters (the i-th parameter is {@code $i}), a kind that
 * says whether it reads or changes, and the roles that see it. A read tool runs on the read path
 * as {@code query} runs, a change tool plans and commits as {@code execute} does; the statement is
 * never a caller's, and every value is bound, never spliced into it.
 *
 * <p>The definition travels inside the {@link ToolRequest} ({@link #toJson}), so that the service
 * runs exactly what the gateway showed, whatever version of the configuration another node holds.
 *
 * @param limit the most rows a page of a read tool holds
 * @param reaction whether an events consumer names this change tool as a reaction: its input
 *     schema then takes {@code causation_token}
 */
public record NamedTool(String name, String title, String description, Kind kind, String statement, List<Parameter> parameters,
    List<String> roles, List<Column> columns, int limit, boolean reaction) {

  /** What a tool name may be: what MCP hosts accept everywhere. */
  public static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]{0,63}");
  /** A page's rows when the definition sets no limit. */
  public static final int DEFAULT_LIMIT = 100;
  public static final int MAX_LIMIT = 10_000;
  /** The argument that binds a reaction to the event it answers. */
  public static final String CAUSATION_TOKEN = "causation_token";
  /**
   * What a causation token is sealed for, with the database's key ring, bound to the caller:
   * {@code {"c": consumer, "e": event_id, "l": lease_token, "t": tool}}. The events role seals one
   * per event and reaction; the command role opens it into the reaction's {@code caused_by}.
   */
  public static final String CAUSATION_PURPOSE = "events-causation";
  /** Arguments a named tool always takes beside its parameters, by kind: no parameter may take their names. */
  static final Set<String> READ_ARGUMENTS = Set.of("cursor");
  static final Set<String> CHANGE_ARGUMENTS = Set.of("plan_id", "confirm", "idempotency_key", CAUSATION_TOKEN);

  public NamedTool {
    parameters = List.copyOf(parameters);
    roles = List.copyOf(roles);
    columns = List.copyOf(columns);
  }

  public enum Kind {
    READ, CHANGE;

    public String wire() {
      return this == READ ? "read" : "change";
    }

    public Service service() {
      return this == READ ? Service.QUERY : Service.COMMAND;
    }
  }

  /**
   * One parameter. {@code from} binds it from the caller's verified identity ({@code caller.name},
   * {@code caller.role}, {@code caller.id} or {@code claim.<name>}) and keeps it out of the input
   * schema; null for a parameter the agent sends. {@code schema} is its JSON Schema in the input schema.
   */
  public record Parameter(String name, String type, boolean required, String from, JsonObject schema) {

    public boolean bound() {
      return from != null;
    }
  }

  /** A result column a read tool declares: its name, and optionally its type and meaning. */
  public record Column(String name, String type, String description) {}

  /** How many placeholders the statement must have: one per parameter. */
  public int placeholders() {
    return parameters.size();
  }

  public boolean visibleTo(Caller caller) {
    return roles.contains(caller.pgRole());
  }

  /** The same tool, shown as a reaction (its input schema takes causation_token) or not. */
  public NamedTool asReaction(boolean isReaction) {
    return isReaction == reaction ? this
        : new NamedTool(name, title, description, kind, statement, parameters, roles, columns, limit, isReaction);
  }

  // ---- the MCP tool ----

  /** The tool as the gateway lists, validates and routes it. */
  public ToolDescriptor descriptor() {
    JsonObject result = resultSchema();
    return new ToolDescriptor(name, title, description, "", new JsonObject(), kind.service(), inputSchema(), result,
        ToolDescriptor.wireOutputSchema(result), annotations());
  }

  /** Closed: the agent's parameters and the flow arguments of the kind, nothing else. */
  public JsonObject inputSchema() {
    JsonObject props = new JsonObject();
    JsonArray required = new JsonArray();
    for (Parameter p : parameters) {
      if (!p.bound()) {
        props.put(p.name(), p.schema().copy());
        if (p.required()) {
          required.add(p.name());
        }
      }
    }
    if (kind == Kind.READ) {
      props.put("cursor", new JsonObject().put("type", "string").put("maxLength", 16384));
    } else {
      props.put("plan_id", new JsonObject().put("type", "string").put("maxLength", 8192));
      props.put("confirm", new JsonObject().put("type", "boolean"));
      props.put("idempotency_key", new JsonObject().put("type", "string").put("minLength", 1).put("maxLength", 200));
      if (reaction) {
        props.put(CAUSATION_TOKEN, new JsonObject().put("type", "string").put("maxLength", 16384));
      }
    }
    JsonObject schema = new JsonObject().put("type", "object").put("properties", props);
    if (!required.isEmpty()) {
      schema.put("required", required);
    }
    return schema.put("additionalProperties", false);
  }

  private JsonObject annotations() {
    boolean read = kind == Kind.READ;
    // a change may remove rows through a cascade or a trigger whatever its statement says, as the built-in change tools
    return new JsonObject().put("readOnlyHint", read).put("destructiveHint", !read).put("idempotentHint", read)
        .put("openWorldHint", false);
  }

  /** The full result schema: query's for a read tool, its rows typed by the declared columns; execute's for a change tool. */
  private JsonObject resultSchema() {
    if (kind == Kind.CHANGE) {
      return ToolCatalog.find(ToolCatalog.EXECUTE).orElseThrow().resultSchema().copy();
    }
    JsonObject result = ToolCatalog.find(ToolCatalog.QUERY).orElseThrow().resultSchema().copy();
    if (!columns.isEmpty()) {
      JsonObject props = new JsonObject();
      for (Column c : columns) {
        JsonObject p = c.type() == null ? new JsonObject() : NamedTypes.resultSchema(c.type());
        props.put(c.name(), c.description() == null ? p : p.put("description", c.description()));
      }
      result.getJsonObject("properties").getJsonObject("rows").put("items", new JsonObject().put("type", "object").put("properties", props));
    }
    return result;
  }

  // ---- binding ----

  /**
   * The values of {@code $1...} in order: the agent's arguments (null for an optional one left
   * out) and the caller's identity for bound parameters. PERMISSION_DENIED when the caller's
   * identity lacks a claim a parameter is bound from: the statement never runs with it unset.
   */
  public JsonArray bind(JsonObject arguments, Caller caller) {
    JsonArray values = new JsonArray();
    for (Parameter p : parameters) {
      if (!p.bound()) {
        values.add(arguments.getValue(p.name()));
        continue;
      }
      Object value = switch (p.from()) {
        case "caller.name" -> caller.name();
        case "caller.role" -> caller.pgRole();
        case "caller.id" -> caller.id();
        default -> caller.claims() == null ? null : caller.claims().getValue(p.from().substring("claim.".length()));
      };
      if (value == null) {
        throw new ToolException(ErrorCode.PERMISSION_DENIED, name + " takes " + p.name() + " from your access token's claim "
            + p.from().substring("claim.".length()) + ", which your credentials do not carry. Nothing ran. Use an OAuth access"
            + " token that carries the claim.");
      }
      values.add(value);
    }
    return values;
  }

  /**
   * {@code err} as the caller of this tool should read it: the tool that runs the statement names
   * its arguments {@code sql} and {@code params}, which this caller never sent. A value refused at
   * {@code /params/i} is the i-th parameter's; a fault of the statement itself names no argument.
   * Anything else passes unchanged.
   */
  public Throwable blame(Throwable err) {
    if (!(err instanceof ToolException te)) {
      return err;
    }
    JsonObject details = te.details().copy();
    Object argument = details.getValue("argument");
    String message = te.getMessage();
    if ("sql".equals(argument)) {
      details.remove("argument");
    } else if ("params".equals(argument)) {
      details.remove("argument");
      JsonArray faults = details.getJsonArray("faults");
      if (faults != null) {
        JsonArray renamed = new JsonArray();
        List<String> names = new ArrayList<>();
        for (Object f : faults) {
          JsonObject fault = ((JsonObject) f).copy();
          String pointer = fault.getString("pointer", "");
          String[] parts = pointer.split("/");
          if (parts.length >= 3 && parts[1].equals("params")) {
            try {
              Parameter p = parameters.get(Integer.parseInt(parts[2]));
              names.add(p.name());
              fault.put("pointer", "/" + p.name() + pointer.substring(("/params/" + parts[2]).length()));
            } catch (RuntimeException e) {
              // not one of ours: left as it came
            }
          }
          renamed.add(fault);
        }
        details.put("faults", renamed);
        if (names.size() == 1) {
          details.put("argument", names.get(0));
          message = "Argument " + names.get(0) + " does not fit: expected " + renamed.getJsonObject(0).getString("expected") + ". "
              + ErrorCode.INVALID_ARGUMENTS.hint();
        }
      }
    }
    return new ToolException(te.code(), message.replace(" in sql", " in the tool's statement"), details);
  }

  // ---- the wire form ----

  /** The definition as configuration writes it, with every default filled in. */
  public JsonObject toJson() {
    JsonArray params = new JsonArray();
    for (Parameter p : parameters) {
      JsonObject o = new JsonObject().put("name", p.name()).put("type", p.type());
      if (p.bound()) {
        params.add(o.put("from", p.from()));
        continue;
      }
      // the limits as configuration writes them; the schema's own type keywords follow from the type
      for (String key : PARAMETER_KEYS) {
        if (!key.equals("name") && !key.equals("type") && p.schema().containsKey(key)) {
          o.put(key, p.schema().getValue(key));
        }
      }
      params.add(o.put("required", p.required()));
    }
    JsonArray cols = new JsonArray();
    for (Column c : columns) {
      JsonObject o = new JsonObject().put("name", c.name());
      if (c.type() != null) {
        o.put("type", c.type());
      }
      if (c.description() != null) {
        o.put("description", c.description());
      }
      cols.add(o);
    }
    JsonObject json = new JsonObject().put("name", name).put("title", title).put("description", description).put("kind", kind.wire())
        .put("statement", statement).put("parameters", params).put("roles", new JsonArray(roles));
    if (kind == Kind.READ) {
      json.put("limit", limit);
    }
    if (!cols.isEmpty()) {
      json.put("columns", cols);
    }
    return reaction ? json.put("reaction", true) : json;
  }

  /** Keys an entry of database.tools may set. */
  static final List<String> ENTRY_KEYS = List.of("name", "title", "description", "kind", "statement", "parameters", "roles", "columns",
      "limit", "reaction");
  /** Keys a parameter may set. */
  static final List<String> PARAMETER_KEYS = List.of("name", "type", "required", "description", "enum", "minimum", "maximum",
      "minLength", "maxLength", "pattern", "minItems", "maxItems", "from");

  /**
   * A definition from an entry of {@code database.tools}; IllegalArgumentException with a sentence
   * that names the fault (and never a value a secret could hide in) when the entry is not one.
   * What only PostgreSQL can say (the statement parses, its kind, its placeholders' types) is
   * checked apart, when the tools are loaded.
   */
  public static NamedTool fromJson(JsonObject entry) {
    unknownKeys(entry, ENTRY_KEYS, "the entry");
    String name = string(entry, "name", true);
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("name must be lower-case letters, digits and '_', starting with a letter, at most 64 characters");
    }
    String description = string(entry, "description", true);
    String title = entry.containsKey("title") ? string(entry, "title", true) : name.replace('_', ' ');
    String kindText = string(entry, "kind", true);
    Kind kind = switch (kindText) {
      case "read" -> Kind.READ;
      case "change" -> Kind.CHANGE;
      default -> throw new IllegalArgumentException("kind must be read or change");
    };
    String statement = string(entry, "statement", true);
    List<Parameter> parameters = new ArrayList<>();
    Set<String> names = new LinkedHashSet<>();
    Object params = entry.getValue("parameters");
    if (params != null && !(params instanceof JsonArray)) {
      throw new IllegalArgumentException("parameters must be a list");
    }
    if (params instanceof JsonArray list) {
      for (int i = 0; i < list.size(); i++) {
        if (!(list.getValue(i) instanceof JsonObject p)) {
          throw new IllegalArgumentException("parameters[" + i + "] must be a mapping with name and type");
        }
        Parameter parameter = parameter(p, i, kind);
        if (!names.add(parameter.name())) {
          throw new IllegalArgumentException("parameters[" + i + "]: the name " + parameter.name() + " is taken by an earlier parameter");
        }
        parameters.add(parameter);
      }
    }
    List<String> roles = strings(entry, "roles");
    if (roles.isEmpty()) {
      throw new IllegalArgumentException("roles must name at least one PostgreSQL role that sees the tool");
    }
    List<Column> columns = new ArrayList<>();
    if (entry.containsKey("columns")) {
      if (kind != Kind.READ) {
        throw new IllegalArgumentException("columns is for read tools only; a change tool answers as execute does");
      }
      if (!(entry.getValue("columns") instanceof JsonArray list)) {
        throw new IllegalArgumentException("columns must be a list of column names or of mappings with name, type and description");
      }
      for (Object c : list) {
        columns.add(column(c));
      }
    }
    int limit = DEFAULT_LIMIT;
    if (entry.containsKey("limit")) {
      if (kind != Kind.READ) {
        throw new IllegalArgumentException("limit is for read tools only");
      }
      if (!(entry.getValue("limit") instanceof Number n) || n.doubleValue() != n.intValue() || n.intValue() < 1 || n.intValue() > MAX_LIMIT) {
        throw new IllegalArgumentException("limit must be a whole number from 1 to " + MAX_LIMIT);
      }
      limit = ((Number) entry.getValue("limit")).intValue();
    }
    return new NamedTool(name, title, description, kind, statement, parameters, roles, columns, limit,
        Boolean.TRUE.equals(entry.getValue("reaction")));
  }

  private static Parameter parameter(JsonObject p, int i, Kind kind) {
    String where = "parameters[" + i + "]";
    unknownKeys(p, PARAMETER_KEYS, where);
    String name = string(p, "name", true);
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(where + ".name must be lower-case letters, digits and '_', starting with a letter");
    }
    if ((kind == Kind.READ ? READ_ARGUMENTS : CHANGE_ARGUMENTS).contains(name)) {
      throw new IllegalArgumentException(where + ".name " + name + " is an argument every " + kind.wire() + " tool takes; choose another");
    }
    where = "parameter " + name;
    String type = string(p, "type", true);
    String canonical = NamedTypes.canonical(type);
    if (canonical == null) {
      throw new IllegalArgumentException(where + " has the unknown type " + type + "; the types are " + NamedTypes.NAMES);
    }
    if (p.containsKey("from")) {
      String from = string(p, "from", true);
      if (!from.equals("caller.name") && !from.equals("caller.role") && !from.equals("caller.id")
          && !(from.startsWith("claim.") && from.length() > "claim.".length())) {
        throw new IllegalArgumentException(where + ".from must be caller.name, caller.role, caller.id or claim.<name>");
      }
      for (String key : p.fieldNames()) {
        if (!List.of("name", "type", "from", "description").contains(key)) {
          throw new IllegalArgumentException(where + " is bound from " + from + ", so it takes no " + key + ": the agent never sends it");
        }
      }
      return new Parameter(name, canonical, true, from, new JsonObject());
    }
    boolean required = true;
    if (p.containsKey("required")) {
      if (!(p.getValue("required") instanceof Boolean b)) {
        throw new IllegalArgumentException(where + ".required must be true or false");
      }
      required = b;
    }
    JsonObject schema = NamedTypes.inputSchema(canonical);
    String jsonType = NamedTypes.jsonType(canonical);
    if (p.containsKey("description")) {
      schema.put("description", string(p, "description", true));
    }
    if (p.containsKey("enum")) {
      if (!(p.getValue("enum") instanceof JsonArray values) || values.isEmpty()) {
        throw new IllegalArgumentException(where + ".enum must be a list of the values allowed");
      }
      for (Object v : values) {
        if (!NamedTypes.fits(jsonType, v)) {
          throw new IllegalArgumentException(where + ".enum holds a value that is not of type " + type);
        }
      }
      schema.put("enum", values.copy());
    }
    for (String bound : new String[] {"minimum", "maximum"}) {
      if (p.containsKey(bound)) {
        if (!"integer".equals(jsonType) && !"number".equals(jsonType)) {
          throw new IllegalArgumentException(where + "." + bound + " is for number types only, not " + type);
        }
        if (!(p.getValue(bound) instanceof Number)) {
          throw new IllegalArgumentException(where + "." + bound + " must be a number");
        }
        schema.put(bound, p.getValue(bound));
      }
    }
    for (String length : new String[] {"minLength", "maxLength"}) {
      if (p.containsKey(length)) {
        if (!"string".equals(jsonType)) {
          throw new IllegalArgumentException(where + "." + length + " is for text types only, not " + type);
        }
        schema.put(length, count(p, length, where));
      }
    }
    for (String items : new String[] {"minItems", "maxItems"}) {
      if (p.containsKey(items)) {
        if (!"array".equals(jsonType)) {
          throw new IllegalArgumentException(where + "." + items + " is for array types only, not " + type);
        }
        schema.put(items, count(p, items, where));
      }
    }
    if (p.containsKey("pattern")) {
      if (!"string".equals(jsonType)) {
        throw new IllegalArgumentException(where + ".pattern is for text types only, not " + type);
      }
      String pattern = string(p, "pattern", true);
      try {
        Pattern.compile(pattern);
      } catch (PatternSyntaxException e) {
        throw new IllegalArgumentException(where + ".pattern is not a regular expression: " + e.getDescription());
      }
      schema.put("pattern", pattern);
    }
    return new Parameter(name, canonical, required, null, schema);
  }

  private static int count(JsonObject p, String key, String where) {
    if (!(p.getValue(key) instanceof Number n) || n.doubleValue() != n.intValue() || n.intValue() < 0) {
      throw new IllegalArgumentException(where + "." + key + " must be a whole number of 0 or more");
    }
    return n.intValue();
  }

  private static Column column(Object c) {
    if (c instanceof String s && !s.isEmpty()) {
      return new Column(s, null, null);
    }
    if (c instanceof JsonObject o) {
      unknownKeys(o, List.of("name", "type", "description"), "columns");
      String type = o.containsKey("type") ? string(o, "type", true) : null;
      if (type != null && NamedTypes.canonical(type) == null) {
        throw new IllegalArgumentException("column " + o.getValue("name") + " has the unknown type " + type + "; the types are "
            + NamedTypes.NAMES);
      }
      return new Column(string(o, "name", true), type == null ? null : NamedTypes.canonical(type),
          o.containsKey("description") ? string(o, "description", true) : null);
    }
    throw new IllegalArgumentException("columns must be a list of column names or of mappings with name, type and description");
  }

  private static void unknownKeys(JsonObject o, List<String> known, String where) {
    for (String key : o.fieldNames()) {
      if (!known.contains(key)) {
        throw new IllegalArgumentException(where + " has the unknown key '" + key + "'; it may set " + String.join(", ", known));
      }
    }
  }

  private static String string(JsonObject o, String key, boolean required) {
    Object v = o.getValue(key);
    if (v instanceof String s && !s.isBlank()) {
      return s;
    }
    throw new IllegalArgumentException(key + " must be " + (required ? "set to " : "") + "a non-empty text");
  }

  private static List<String> strings(JsonObject o, String key) {
    Object v = o.getValue(key);
    if (v instanceof String s) {
      return List.of(s.split(",")).stream().map(String::trim).filter(x -> !x.isEmpty()).toList();
    }
    if (v instanceof JsonArray a && a.stream().allMatch(x -> x instanceof String)) {
      return a.stream().map(String::valueOf).toList();
    }
    throw new IllegalArgumentException(key + " must be a list of names");
  }

  /** The fingerprint of the definition: a plan made under one definition is never committed under another. */
  public String fingerprint() {
    return Digests.sha256Hex(canonicalText(toJson().copy()));
  }

  private static String canonicalText(Object value) {
    if (value instanceof JsonObject o) {
      StringBuilder sb = new StringBuilder("{");
      o.fieldNames().stream().sorted().forEach(k -> sb.append(io.vertx.core.json.Json.encode(k)).append(':')
          .append(canonicalText(o.getValue(k))).append(','));
      return sb.append('}').toString();
    }
    if (value instanceof JsonArray a) {
      StringBuilder sb = new StringBuilder("[");
      a.forEach(v -> sb.append(canonicalText(v)).append(','));
      return sb.append(']').toString();
    }
    return io.vertx.core.json.Json.encode(value);
  }
}
