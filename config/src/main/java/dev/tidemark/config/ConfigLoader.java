package dev.tidemark.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Resolves every key from the config file, then the environment, then flags (the last one found
 * wins), and builds the typed config once. An unknown key in the file is an error, so that a
 * misspelt setting is never silently ignored.
 */
public final class ConfigLoader {

  private ConfigLoader() {}

  public static TidemarkConfig load(Path file, Map<String, String> env, Map<ConfigKey, String> flags) {
    Map<ConfigKey, String> values = fromFileAndEnvironment(file, env);
    values.putAll(flags);
    return resolve(values);
  }

  /** The keys the file sets, then those the environment sets over them; unknown names are refused. */
  public static Map<ConfigKey, String> fromFileAndEnvironment(Path file, Map<String, String> env) {
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    if (file != null) {
      values.putAll(readFile(file));
    }
    for (ConfigKey key : ConfigKey.values()) {
      String fromEnv = env.get(key.envName());
      if (fromEnv != null) {
        values.put(key, fromEnv);
      }
    }
    refuseUnknownEnvironment(env);
    return values;
  }

  /** The typed config of fully layered values, with secrets given as files read in. */
  public static TidemarkConfig resolve(Map<ConfigKey, String> layered) {
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    values.putAll(layered);
    readSecretFile(values, ConfigKey.DATABASE_PASSWORD_FILE, ConfigKey.DATABASE_PASSWORD);
    readSecretFile(values, ConfigKey.KAFKA_SASL_PASSWORD_FILE, ConfigKey.KAFKA_SASL_PASSWORD);
    return TidemarkConfig.from(values);
  }

  /** A secret given as a file (a mounted Secret) takes the place of the key that holds it inline. */
  private static void readSecretFile(Map<ConfigKey, String> values, ConfigKey fileKey, ConfigKey valueKey) {
    String file = values.getOrDefault(fileKey, "").trim();
    if (file.isEmpty()) {
      return;
    }
    try {
      values.put(valueKey, Files.readString(Path.of(file), StandardCharsets.UTF_8).strip());
    } catch (IOException e) {
      throw new IllegalArgumentException("config key " + fileKey.key() + ": cannot read " + file + " (" + e.getMessage() + ")");
    }
  }

  /**
   * What Kubernetes sets for every Service whose name starts with {@code tidemark-} (service links:
   * {@code TIDEMARK_GATEWAY_SERVICE_HOST}, {@code TIDEMARK_GATEWAY_PORT_80_TCP_ADDR}, ...): not settings.
   */
  private static final Pattern SERVICE_LINK = Pattern.compile(
      "TIDEMARK_([A-Z0-9_]+_)?(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\\d+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)?)");

  /** A misspelt variable would otherwise be ignored as silently as a misspelt key in the file. */
  static void refuseUnknownEnvironment(Map<String, String> env) {
    for (String name : new java.util.TreeSet<>(env.keySet())) {
      if (name.startsWith("TIDEMARK_") && !SERVICE_LINK.matcher(name).matches()
          && java.util.Arrays.stream(ConfigKey.values()).noneMatch(k -> k.envName().equals(name))) {
        throw new IllegalArgumentException("environment variable " + name
            + " names no config key; docs/configuration.md lists every key and its variable");
      }
    }
  }

  /** The file is YAML (JSON is YAML too): either flat dotted keys or nested sections. */
  static Map<ConfigKey, String> readFile(Path file) {
    JsonNode root;
    try {
      // a key written twice in one mapping is refused, not resolved by whichever came last
      root = new ObjectMapper(new YAMLFactory()).enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .readTree(file.toFile());
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read config file " + file + ": " + e.getMessage());
    }
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    if (root == null || root.isMissingNode() || root.isNull()) {
      return values;
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException("config file " + file + " must hold a mapping of keys to values");
    }
    flatten("", root, values, file);
    return values;
  }

  private static void flatten(String prefix, JsonNode node, Map<ConfigKey, String> out, Path file) {
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> e = fields.next();
      String key = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
      JsonNode value = e.getValue();
      ConfigKey known = ConfigKey.byKey(key);
      if (known != null) {
        if (out.containsKey(known)) {
          throw new IllegalArgumentException("config file " + file + ": " + key
              + " is set twice (once flat, once in a section); keep one");
        }
        // keys whose value is a list or mapping of sections: kept as JSON, checked entry by entry when the config is built
        out.put(known, SECTIONS.contains(known) && value.isContainerNode() ? value.toString() : scalar(value, key, file));
      } else if (value.isObject()) {
        flatten(key, value, out, file);
      } else {
        throw new IllegalArgumentException("config file " + file + ": unknown key '" + key
            + "'; docs/configuration.md lists every key");
      }
    }
  }

  /** Keys whose value in the file is a YAML list or mapping, and in the environment its JSON. */
  static final java.util.Set<ConfigKey> SECTIONS = java.util.EnumSet.of(ConfigKey.DATABASES, ConfigKey.DATABASE_TOOLS,
      ConfigKey.DATABASE_TOOLSETS, ConfigKey.DATABASE_CONSUMERS);

  private static String scalar(JsonNode value, String key, Path file) {
    return plain(value, "config file " + file + ": " + key);
  }

  /** A plain value, or a list of plain values joined by commas; {@code where} names it in the error. */
  static String plain(JsonNode value, String where) {
    if (value.isArray()) {
      StringBuilder sb = new StringBuilder();
      for (JsonNode item : value) {
        if (!item.isValueNode()) {
          throw new IllegalArgumentException(where + " must be a list of plain values");
        }
        sb.append(sb.length() == 0 ? "" : ",").append(item.asText());
      }
      return sb.toString();
    }
    if (!value.isValueNode()) {
      throw new IllegalArgumentException(where + " must be a plain value");
    }
    return value.isNull() ? "" : value.asText();
  }
}
