-- What restore_rows and undo_transaction need of a table beside its changes, kept where the
-- changes are kept: its key columns and whether it has others. The relay writes a table's row
-- when decoding first meets the table (and again after its shape changed), so that the changelog
-- can be read, wherever it is stored (database.changelog-url), without the served database's
-- catalogs. Filled here for the tables the capture follows now.
CREATE TABLE tidemark.changelog_relation (
  relid         oid PRIMARY KEY,
  key_columns   text[],
  other_columns boolean NOT NULL
);
INSERT INTO tidemark.changelog_relation (relid, key_columns, other_columns)
SELECT t.relid, t.key_columns,
       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped
                AND a.attname::text <> ALL (t.key_columns))
  FROM tidemark.captured_table t
 WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.relid);
