package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class DigestsTest {

  @Test
  void sha256HexIsLowerCaseHexOfTheUtf8TextAndNullIsEmpty() {
    assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", Digests.sha256Hex("abc"));
    assertEquals("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", Digests.sha256Hex(null));
    // "é" is two bytes in UTF-8: the digest is of those, as PostgreSQL's convert_to(t, 'UTF8') gives them
    assertEquals("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c", Digests.sha256Hex("\u00e9"));
  }
}
