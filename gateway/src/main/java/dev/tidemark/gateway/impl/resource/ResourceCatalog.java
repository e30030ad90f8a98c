package dev.tidemark.gateway.impl.resource;

import dev.tidemark.gateway.McpExtension;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** What {@code resources/list} and {@code resources/templates/list} show: Tidemark's own resources, then the extensions'. */
final class ResourceCatalog {

  private ResourceCatalog() {}

  static JsonArray resources(List<McpExtension> extensions) {
    JsonArray out = new JsonArray()
        .add(new JsonObject().put("uri", ResourceUris.SCHEMA).put("name", "schema").put("title", "Tables you can read")
            .put("description", "Every table and view you can read, with its estimated rows, primary key and comment. "
                + "A schema change sends notifications/resources/list_changed.")
            .put("mimeType", "application/json"))
        .add(new JsonObject().put("uri", ResourceUris.CHANGES).put("name", "changes").put("title", "Changelog generation")
            .put("description", "A wake-up hint: its body is an opaque generation that moves on every committed change. "
                + "Subscribe to it, then call changes_since to learn what changed.")
            .put("mimeType", "application/json"));
    for (String topic : DocsResources.TOPICS) {
      out.add(new JsonObject().put("uri", ResourceUris.DOCS_PREFIX + topic).put("name", "docs-" + topic)
          .put("title", "Tidemark reference: " + topic).put("mimeType", "text/markdown"));
    }
    extensions.forEach(e -> e.resources().forEach(r -> out.add(r.copy())));
    return out;
  }

  static JsonArray templates(List<McpExtension> extensions) {
    JsonArray out = new JsonArray()
        .add(new JsonObject().put("uriTemplate", "tidemark://table/{table}").put("name", "table").put("title", "A table's shape")
            .put("description", "describe_table as a resource: columns, keys, foreign keys, indexes. {table} is name or schema.name. "
                + "Subscribe to hear of every change to the table.").put("mimeType", "application/json"))
        .add(new JsonObject().put("uriTemplate", "tidemark://row/{table}/{key}").put("name", "row").put("title", "One row")
            .put("description", "get_row as a resource. {key} is the primary-key values in key order, each percent-encoded, "
                + "joined by commas (tidemark://row/order_items/17,2). Subscribe to hear when the row changes.")
            .put("mimeType", "application/json"))
        .add(new JsonObject().put("uriTemplate", "tidemark://docs/{topic}").put("name", "docs").put("title", "Tidemark reference")
            .put("description", "Reference pages: " + String.join(", ", DocsResources.TOPICS) + ".").put("mimeType", "text/markdown"));
    extensions.forEach(e -> e.resourceTemplates().forEach(r -> out.add(r.copy())));
    return out;
  }
}
