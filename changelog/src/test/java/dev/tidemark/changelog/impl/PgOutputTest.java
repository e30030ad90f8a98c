package dev.tidemark.changelog.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** pgoutput protocol 1, as PostgreSQL's "Logical Replication Message Formats" describes it. */
class PgOutputTest {

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final DataOutputStream out = new DataOutputStream(bytes);

  private ByteBuffer done() {
    return ByteBuffer.wrap(bytes.toByteArray());
  }

  private void cstring(String s) throws IOException {
    out.write(s.getBytes(StandardCharsets.UTF_8));
    out.write(0);
  }

  private void text(String s) throws IOException {
    out.write('t');
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  @Test
  void beginAndCommitCarryTheCommitLsnAndTime() throws IOException {
    out.write('B');
    out.writeLong(0x1_0000_0010L);
    out.writeLong(123L);
    out.writeInt(742);
    assertEquals(new PgOutput.Begin(0x1_0000_0010L, 123L, 742), PgOutput.parse(done()));
    bytes.reset();
    out.write('C');
    out.write(0);
    out.writeLong(10);
    out.writeLong(20);
    out.writeLong(30);
    assertEquals(new PgOutput.Commit(10, 20, 30), PgOutput.parse(done()));
  }

  @Test
  void aRelationNamesItsColumnsAndTypes() throws IOException {
    out.write('R');
    out.writeInt(16384);
    cstring("public");
    cstring("orders");
    out.write('f');
    out.writeShort(2);
    out.write(1);
    cstring("id");
    out.writeInt(23);
    out.writeInt(-1);
    out.write(0);
    cstring("note");
    out.writeInt(25);
    out.writeInt(-1);
    PgOutput.Relation r = (PgOutput.Relation) PgOutput.parse(done());
    assertEquals("public", r.schema());
    assertEquals("orders", r.name());
    assertEquals('f', r.replicaIdentity());
    assertEquals(List.of(new PgOutput.Column(true, "id", 23), new PgOutput.Column(false, "note", 25)), r.columns());
  }

  @Test
  void anUpdateWithTheOldRowMarksUnchangedToastAndNulls() throws IOException {
    out.write('U');
    out.writeInt(16384);
    out.write('O');
    out.writeShort(2);
    text("1");
    text("long text");
    out.write('N');
    out.writeShort(2);
    text("1");
    out.write('u');
    PgOutput.Update u = (PgOutput.Update) PgOutput.parse(done());
    assertEquals("long text", u.old().values()[1]);
    assertSame(PgOutput.UNCHANGED_TOAST, u.row().values()[1]);
    bytes.reset();
    out.write('I');
    out.writeInt(1);
    out.write('N');
    out.writeShort(1);
    out.write('n');
    assertNull(((PgOutput.Insert) PgOutput.parse(done())).row().values()[0]);
  }

  @Test
  void aMessageSaysWhetherItIsTransactional() throws IOException {
    out.write('M');
    out.write(1);
    out.writeLong(99);
    cstring("tidemark.attribution");
    byte[] content = "{}".getBytes(StandardCharsets.UTF_8);
    out.writeInt(content.length);
    out.write(content);
    PgOutput.LogicalMessage m = (PgOutput.LogicalMessage) PgOutput.parse(done());
    assertTrue(m.transactional());
    assertEquals("tidemark.attribution", m.prefix());
    assertEquals("{}", m.content());
    bytes.reset();
    out.write('T');
    out.writeInt(2);
    out.write(0);
    out.writeInt(5);
    out.writeInt(6);
    assertEquals(List.of(5, 6), ((PgOutput.Truncate) PgOutput.parse(done())).relids());
  }
}
