package dev.tidemark.changelog.impl;

import com.fasterxml.jackson.core.JsonGenerator;
import io.vertx.core.json.jackson.DatabindCodec;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/** Writes a changelog record's value with Jackson's generator, so that JSON already written (an image) goes in as it is. */
final class RecordValues {

  /** Writes the fields of one JSON object. */
  interface Fields {
    void write(JsonGenerator w) throws IOException;
  }

  private RecordValues() {}

  static String write(Fields fields) {
    StringWriter out = new StringWriter(512);
    try (JsonGenerator w = DatabindCodec.mapper().getFactory().createGenerator(out)) {
      w.writeStartObject();
      fields.write(w);
      w.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);  // a StringWriter does not fail
    }
    return out.toString();
  }

  /** {@code json}, a JSON text PostgreSQL wrote, as the value of {@code name}; nothing when null. */
  static void rawField(JsonGenerator w, String name, String json) throws IOException {
    if (json != null) {
      w.writeFieldName(name);
      w.writeRawValue(json);
    }
  }

  static void stringField(JsonGenerator w, String name, String value) throws IOException {
    if (value != null) {
      w.writeStringField(name, value);
    }
  }
}
