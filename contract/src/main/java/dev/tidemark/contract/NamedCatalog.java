package dev.tidemark.contract;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The tools a team defines for one database, as a node serves them: the definitions that passed
 * every check, each failed entry with its fault, the toolsets (named groups of tools served at
 * {@code /mcp/{database}/{toolset}}) and the events consumers that declare context and reactions.
 * Immutable; a reload makes a new one.
 *
 * <p>Built in two steps: {@link #parse} checks what needs no database (keys, names, types,
 * limits, clashes), and {@link #assemble} takes what PostgreSQL said of each statement, so that a
 * tool whose check failed is left out together with what depended on it.
 */
public final class NamedCatalog {

  /** A tool, toolset or consumer entry that is not served (or served only in part), and why. */
  public record Fault(String entry, String fault) {

    public JsonObject toJson() {
      return new JsonObject().put("entry", entry).put("fault", fault);
    }

    public String describe() {
      return entry + ": " + fault;
    }
  }

  /** A named read tool an events consumer reads for each event; {@code arguments} maps a parameter to the event row's column. */
  public record Context(String tool, Map<String, String> arguments) {

    public Context {
      arguments = Map.copyOf(arguments);
    }

    /** The column of the event's row that fills {@code parameter}: the mapped one, else the column of the same name. */
    public String column(String parameter) {
      return arguments.getOrDefault(parameter, parameter);
    }
  }

  /** An events consumer's context reads and the change tools it offers as reactions. */
  public record Consumer(String name, List<Context> context, List<String> reactions) {

    public Consumer {
      context = List.copyOf(context);
      reactions = List.copyOf(reactions);
    }
  }

  /**
   * What a section of configuration defines, checked without a database: the tools that may be
   * checked further (each with the entry that names it in faults), the faults found so far, and
   * the toolsets and consumers as written.
   */
  public record Definitions(List<NamedTool> tools, Map<String, String> entries, List<Fault> faults, JsonObject toolsets,
      JsonArray consumers, String fingerprint) {

    public Definitions {
      tools = List.copyOf(tools);
      entries = Map.copyOf(entries);
      faults = List.copyOf(faults);
    }

    /** The entry that defines {@code tool}, as faults name it. */
    public String entry(String tool) {
      return entries.getOrDefault(tool, tool);
    }
  }

  public static final NamedCatalog EMPTY = new NamedCatalog(Map.of(), List.of(), Map.of(), Map.of(), "", false);

  private final Map<String, NamedTool> tools;
  private final List<Fault> faults;
  private final Map<String, List<String>> toolsets;
  private final Map<String, Consumer> consumers;
  private final String fingerprint;
  private final boolean loaded;

  private NamedCatalog(Map<String, NamedTool> tools, List<Fault> faults, Map<String, List<String>> toolsets,
      Map<String, Consumer> consumers, String fingerprint, boolean loaded) {
    this.tools = tools;
    this.faults = List.copyOf(faults);
    this.toolsets = toolsets;
    this.consumers = consumers;
    this.fingerprint = fingerprint;
    this.loaded = loaded;
  }

  /** Keys of a section: the file of database.tools-file holds these at its top level. */
  public static final List<String> SECTION_KEYS = List.of("tools", "toolsets", "consumers");

  /**
   * The definitions of {@code section} ({@code {tools, toolsets, consumers}}); {@code reserved} are
   * the names no named tool may take (the built-in tools'). {@code where} prefixes each entry's
   * name in faults (such as {@code database.} for keys of the config).
   */
  public static Definitions parse(JsonObject section, Collection<String> reserved, String where) {
    List<NamedTool> tools = new ArrayList<>();
    Map<String, String> entries = new LinkedHashMap<>();
    List<Fault> faults = new ArrayList<>();
    Object list = section.getValue("tools");
    if (list != null && !(list instanceof JsonArray)) {
      faults.add(new Fault(where + "tools", "must be a list of tool entries"));
    } else if (list instanceof JsonArray entriesList) {
      for (int i = 0; i < entriesList.size(); i++) {
        Object raw = entriesList.getValue(i);
        String label = where + "tools[" + i + "]" + (raw instanceof JsonObject o && o.getValue("name") instanceof String n ? " (" + n + ")" : "");
        if (!(raw instanceof JsonObject entry)) {
          faults.add(new Fault(label, "must be a mapping with name, description, kind, statement, parameters and roles"));
          continue;
        }
        try {
          NamedTool tool = NamedTool.fromJson(entry);
          if (reserved.contains(tool.name())) {
            throw new IllegalArgumentException("the name " + tool.name() + " is a built-in tool's; choose another");
          }
          if (entries.containsKey(tool.name())) {
            throw new IllegalArgumentException("the name " + tool.name() + " is taken by " + entries.get(tool.name()));
          }
          entries.put(tool.name(), label);
          tools.add(tool);
        } catch (IllegalArgumentException e) {
          faults.add(new Fault(label, e.getMessage()));
        }
      }
    }
    Object sets = section.getValue("toolsets");
    JsonObject toolsets = sets instanceof JsonObject o ? o : new JsonObject();
    if (sets != null && !(sets instanceof JsonObject)) {
      faults.add(new Fault(where + "toolsets", "must be a mapping of toolset names to lists of tool names"));
    }
    Object cons = section.getValue("consumers");
    JsonArray consumers = cons instanceof JsonArray a ? a : new JsonArray();
    if (cons != null && !(cons instanceof JsonArray)) {
      faults.add(new Fault(where + "consumers", "must be a list of consumer entries"));
    }
    for (String key : section.fieldNames()) {
      if (!SECTION_KEYS.contains(key)) {
        faults.add(new Fault(where + key, "is not a key of the named tools; the keys are " + String.join(", ", SECTION_KEYS)));
      }
    }
    return new Definitions(tools, entries, faults, toolsets, consumers, Digests.sha256Hex(section.encode()));
  }

  /**
   * The catalog served: the tools of {@code defs} PostgreSQL passed ({@code refused}: a tool's name
   * to what failed), the toolsets and consumers over them; a toolset or consumer that names a tool
   * not served keeps the rest, and the fault is listed.
   *
   * @param builtIns the names a toolset may take beside the named tools
   */
  public static NamedCatalog assemble(Definitions defs, Map<String, String> refused, Set<String> builtIns) {
    List<Fault> faults = new ArrayList<>(defs.faults());
    Map<String, NamedTool> served = new LinkedHashMap<>();
    for (NamedTool tool : defs.tools()) {
      String fault = refused.get(tool.name());
      if (fault == null) {
        served.put(tool.name(), tool);
      } else {
        faults.add(new Fault(defs.entry(tool.name()), fault));
      }
    }
    Map<String, Consumer> consumers = new LinkedHashMap<>();
    JsonArray entries = defs.consumers();
    for (int i = 0; i < entries.size(); i++) {
      consumer(entries.getValue(i), "consumers[" + i + "]", served, faults).ifPresent(c -> {
        if (consumers.containsKey(c.name())) {
          faults.add(new Fault("consumers (" + c.name() + ")", "the consumer is declared twice; the first declaration holds"));
        } else {
          consumers.put(c.name(), c);
        }
      });
    }
    // a change tool that is some consumer's reaction takes causation_token
    Set<String> reactions = new java.util.HashSet<>();
    consumers.values().forEach(c -> reactions.addAll(c.reactions()));
    served.replaceAll((name, tool) -> tool.asReaction(reactions.contains(name)));
    Map<String, List<String>> toolsets = new LinkedHashMap<>();
    for (String set : defs.toolsets().fieldNames()) {
      String label = "toolsets." + set;
      if (!NamedTool.NAME.matcher(set).matches()) {
        faults.add(new Fault(label, "a toolset name must be lower-case letters, digits and '_', starting with a letter"));
        continue;
      }
      if (!(defs.toolsets().getValue(set) instanceof JsonArray names)) {
        faults.add(new Fault(label, "must be a list of tool names"));
        continue;
      }
      List<String> members = new ArrayList<>();
      for (Object n : names) {
        if (n instanceof String s && (served.containsKey(s) || builtIns.contains(s))) {
          members.add(s);
        } else {
          faults.add(new Fault(label, "names " + n + ", which is no tool served here; the toolset is served without it"));
        }
      }
      toolsets.put(set, List.copyOf(members));
    }
    return new NamedCatalog(served, faults, toolsets, consumers, defs.fingerprint(), true);
  }

  private static java.util.Optional<Consumer> consumer(Object raw, String label, Map<String, NamedTool> served, List<Fault> faults) {
    if (!(raw instanceof JsonObject entry) || !(entry.getValue("name") instanceof String name) || name.isBlank()) {
      faults.add(new Fault(label, "must be a mapping with a name, and context or reactions"));
      return java.util.Optional.empty();
    }
    label = label + " (" + name + ")";
    for (String key : entry.fieldNames()) {
      if (!List.of("name", "context", "reactions").contains(key)) {
        faults.add(new Fault(label, "has the unknown key '" + key + "'; it may set name, context and reactions"));
      }
    }
    List<Context> context = new ArrayList<>();
    JsonArray contextEntries = entry.getValue("context") instanceof JsonArray a ? a : new JsonArray();
    for (Object c : contextEntries) {
      JsonObject ctx = c instanceof String s ? new JsonObject().put("tool", s) : c instanceof JsonObject o ? o : new JsonObject();
      NamedTool tool = ctx.getValue("tool") instanceof String t ? served.get(t) : null;
      if (tool == null || tool.kind() != NamedTool.Kind.READ) {
        faults.add(new Fault(label, "context names " + ctx.getValue("tool") + ", which is no named read tool served here; the"
            + " consumer is served without it"));
        continue;
      }
      Map<String, String> arguments = new LinkedHashMap<>();
      JsonObject mapped = ctx.getValue("arguments") instanceof JsonObject m ? m : new JsonObject();
      boolean ok = true;
      for (String parameter : mapped.fieldNames()) {
        boolean known = tool.parameters().stream().anyMatch(p -> p.name().equals(parameter) && !p.bound());
        if (!known || !(mapped.getValue(parameter) instanceof String column)) {
          faults.add(new Fault(label, "context " + tool.name() + " maps " + parameter + ", which is no parameter the agent sends it"
              + " (or maps it to no column name); the consumer is served without this context"));
          ok = false;
          break;
        }
        arguments.put(parameter, column);
      }
      if (ok) {
        context.add(new Context(tool.name(), arguments));
      }
    }
    List<String> reactions = new ArrayList<>();
    JsonArray reactionEntries = entry.getValue("reactions") instanceof JsonArray a ? a : new JsonArray();
    for (Object r : reactionEntries) {
      NamedTool tool = r instanceof String s ? served.get(s) : null;
      if (tool == null || tool.kind() != NamedTool.Kind.CHANGE) {
        faults.add(new Fault(label, "reactions names " + r + ", which is no named change tool served here; the consumer is"
            + " served without it"));
        continue;
      }
      reactions.add(tool.name());
    }
    return java.util.Optional.of(new Consumer(name, context, reactions));
  }

  /** Whether a load has made this catalog (an empty catalog before the first load is not). */
  public boolean loaded() {
    return loaded;
  }

  public NamedTool tool(String name) {
    return tools.get(name);
  }

  public Collection<NamedTool> tools() {
    return tools.values();
  }

  public List<Fault> faults() {
    return faults;
  }

  /** The tools of toolset {@code name}, or null when no such toolset is served. */
  public List<String> toolset(String name) {
    return toolsets.get(name);
  }

  public Set<String> toolsets() {
    return toolsets.keySet();
  }

  /** The context and reactions consumer {@code name} declares, or null. */
  public Consumer consumer(String name) {
    return consumers.get(name);
  }

  /** What changed for a client between two catalogs: the tools and toolsets served. */
  public boolean sameToolsAs(NamedCatalog other) {
    if (!tools.keySet().equals(other.tools.keySet()) || !toolsets.equals(other.toolsets)) {
      return false;
    }
    return tools.values().stream().allMatch(t -> t.toJson().equals(other.tools.get(t.name()).toJson()));
  }

  /** What status shows: the tools served, and each entry that is not, with its fault. */
  public JsonObject toJson() {
    JsonArray refused = new JsonArray();
    faults.forEach(f -> refused.add(f.toJson()));
    JsonObject sets = new JsonObject();
    toolsets.forEach((k, v) -> sets.put(k, new JsonArray(v)));
    return new JsonObject().put("served", new JsonArray(List.copyOf(tools.keySet()))).put("refused", refused).put("toolsets", sets);
  }
}
