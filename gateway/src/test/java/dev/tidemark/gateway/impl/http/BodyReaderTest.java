package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BodyReaderTest {

  @Test
  void aDeclaredLengthOverTheCapIsTooLargeBeforeAByteIsRead() {
    assertTrue(BodyReader.declaredTooLarge("1025", 1024));
    assertTrue(BodyReader.declaredTooLarge(" 99999999999 ", 1024));
  }

  @Test
  void aLengthAtTheCapMissingOrNotANumberIsLeftToTheByteCount() {
    assertFalse(BodyReader.declaredTooLarge("1024", 1024));
    assertFalse(BodyReader.declaredTooLarge(null, 1024));
    assertFalse(BodyReader.declaredTooLarge("lots", 1024));
  }
}
