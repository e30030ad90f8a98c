-- The changelog: every committed change to a served table, whoever made it, in commit order.
-- See docs/changelog.md for the design and the rights each part needs.

-- One row per captured change. Written by the capture triggers, in the changing transaction.
CREATE TABLE tidemark.changelog (
  id              bigserial PRIMARY KEY,
  xid             xid8 NOT NULL DEFAULT pg_current_xact_id(),
  relid           oid,
  schema_name     text NOT NULL,
  table_name      text NOT NULL,
  op              text NOT NULL CHECK (op IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'DDL')),
  key             jsonb,
  before          jsonb,
  after           jsonb,
  changed_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  caller          text,
  tool            text,
  idempotency_key text,
  plan_id         text
);
CREATE INDEX changelog_xid_idx ON tidemark.changelog (xid, id);
COMMENT ON TABLE tidemark.changelog IS 'Captured changes; a change''s position is (changelog_commit.position, id).';

-- One row per committing transaction that captured something. Its position is taken at commit,
-- under a lock held until the commit is visible, so position order is commit order.
CREATE SEQUENCE tidemark.changelog_position_seq;
CREATE TABLE tidemark.changelog_commit (
  position     bigint PRIMARY KEY,
  xid          xid8 NOT NULL UNIQUE,
  committed_at timestamptz NOT NULL
);
CREATE INDEX changelog_commit_time_idx ON tidemark.changelog_commit (committed_at);

-- The relay's progress, the retention horizon and the secret that signs cursors.
CREATE TABLE tidemark.changelog_state (
  singleton                 boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  secret                    text NOT NULL DEFAULT (gen_random_uuid()::text || gen_random_uuid()::text),
  published_commit          bigint NOT NULL DEFAULT 0,
  published_change          bigint NOT NULL DEFAULT 0,
  pruned_commit             bigint NOT NULL DEFAULT 0,
  pruned_change             bigint NOT NULL DEFAULT 0
);
INSERT INTO tidemark.changelog_state DEFAULT VALUES;

-- The schemas whose tables are captured (database.schemas, written by the changelog role) and
-- the tables that carry capture triggers, with the key columns the triggers were given.
CREATE TABLE tidemark.captured_schema (schema_name text PRIMARY KEY CHECK (schema_name <> 'tidemark'));
CREATE TABLE tidemark.captured_table (
  relid       oid PRIMARY KEY,
  key_columns text[] NOT NULL
);

-- Runs once per changelog row at commit (deferred). The first run of a transaction takes the
-- position lock and a position; the lock is released only after the commit is visible, so a
-- reader that sees position p also sees every position below p that will ever commit.
CREATE FUNCTION tidemark.changelog_assign_position() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM tidemark.changelog_commit WHERE xid = NEW.xid) THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(8388262611043690597);  -- 'tmchange': the position lock
  INSERT INTO tidemark.changelog_commit (position, xid, committed_at)
  VALUES (nextval('tidemark.changelog_position_seq'), NEW.xid, clock_timestamp());
  PERFORM pg_notify('tidemark_changelog', '');
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER changelog_assign_position AFTER INSERT ON tidemark.changelog
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION tidemark.changelog_assign_position();

-- The capture trigger of every served table. SECURITY DEFINER so that callers need no rights on
-- schema tidemark; search_path pinned so that a caller's objects cannot stand in for ours.
CREATE FUNCTION tidemark.capture() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  img jsonb;
  k   jsonb;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    INSERT INTO tidemark.changelog (relid, schema_name, table_name, op, caller, tool, idempotency_key, plan_id)
    VALUES (TG_RELID, TG_TABLE_SCHEMA, TG_TABLE_NAME, 'TRUNCATE',
            nullif(current_setting('tidemark.caller', true), ''), nullif(current_setting('tidemark.tool', true), ''),
            nullif(current_setting('tidemark.idempotency_key', true), ''), nullif(current_setting('tidemark.plan_id', true), ''));
    RETURN NULL;
  END IF;
  img := CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END;
  IF TG_NARGS = 0 THEN
    k := img;  -- no primary key: the whole row is the identity
  ELSE
    k := '[]'::jsonb;
    FOR i IN 0 .. TG_NARGS - 1 LOOP
      k := k || jsonb_build_array(img -> TG_ARGV[i]);
    END LOOP;
  END IF;
  INSERT INTO tidemark.changelog (relid, schema_name, table_name, op, key, before, after, caller, tool, idempotency_key, plan_id)
  VALUES (TG_RELID, TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP, k,
          CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,
          CASE WHEN TG_OP IN ('INSERT', 'UPDATE') THEN img END,
          nullif(current_setting('tidemark.caller', true), ''), nullif(current_setting('tidemark.tool', true), ''),
          nullif(current_setting('tidemark.idempotency_key', true), ''), nullif(current_setting('tidemark.plan_id', true), ''));
  RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION tidemark.capture() FROM PUBLIC;

-- Puts capture triggers on every table of the captured schemas and takes them off tables that
-- left them; re-creates a table's triggers when its primary key changed. Returns how many tables
-- it touched. Called by the DDL event trigger where one exists, and by the changelog role's
-- periodic reconcile everywhere.
CREATE FUNCTION tidemark.reconcile_capture() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r       record;
  touched integer := 0;
  args    text;
BEGIN
  -- several changelog nodes and the DDL event trigger may reconcile at once
  PERFORM pg_advisory_xact_lock(8388262610923431013);  -- 'tmcaptur'
  FOR r IN
    SELECT c.oid AS relid, n.nspname, c.relname,
           COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
                       FROM pg_index i
                       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                      WHERE i.indrelid = c.oid AND i.indisprimary), '{}') AS key_columns,
           t.key_columns AS have
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN tidemark.captured_schema s ON s.schema_name = n.nspname
      LEFT JOIN tidemark.captured_table t ON t.relid = c.oid
     WHERE c.relkind = 'r' AND NOT c.relispartition AND n.nspname <> 'tidemark'
  LOOP
    IF r.have IS NOT NULL AND r.have = r.key_columns
       AND EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = r.relid AND tgname = 'tidemark_capture') THEN
      CONTINUE;
    END IF;
    SELECT string_agg(quote_literal(col), ', ') INTO args FROM unnest(r.key_columns) AS col;
    EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture ON %I.%I', r.nspname, r.relname);
    EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture_truncate ON %I.%I', r.nspname, r.relname);
    EXECUTE format('CREATE TRIGGER tidemark_capture AFTER INSERT OR UPDATE OR DELETE ON %I.%I '
                   'FOR EACH ROW EXECUTE FUNCTION tidemark.capture(%s)', r.nspname, r.relname, COALESCE(args, ''));
    EXECUTE format('CREATE TRIGGER tidemark_capture_truncate AFTER TRUNCATE ON %I.%I '
                   'FOR EACH STATEMENT EXECUTE FUNCTION tidemark.capture()', r.nspname, r.relname);
    INSERT INTO tidemark.captured_table (relid, key_columns) VALUES (r.relid, r.key_columns)
      ON CONFLICT (relid) DO UPDATE SET key_columns = EXCLUDED.key_columns;
    touched := touched + 1;
  END LOOP;
  -- tables that were dropped, or whose schema is no longer captured
  FOR r IN
    SELECT t.relid, n.nspname, c.relname
      FROM tidemark.captured_table t
      LEFT JOIN pg_class c ON c.oid = t.relid
      LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid IS NULL OR NOT EXISTS (SELECT 1 FROM tidemark.captured_schema s WHERE s.schema_name = n.nspname)
  LOOP
    IF r.relname IS NOT NULL THEN
      EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture ON %I.%I', r.nspname, r.relname);
      EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture_truncate ON %I.%I', r.nspname, r.relname);
    END IF;
    DELETE FROM tidemark.captured_table WHERE relid = r.relid;
    touched := touched + 1;
  END LOOP;
  RETURN touched;
END
$$;

-- Replaces the set of captured schemas (database.schemas) and reconciles at once.
CREATE FUNCTION tidemark.capture_schemas(wanted text[]) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  DELETE FROM tidemark.captured_schema WHERE schema_name <> ALL (wanted);
  INSERT INTO tidemark.captured_schema (schema_name)
    SELECT DISTINCT w FROM unnest(wanted) AS w WHERE w <> 'tidemark' ON CONFLICT DO NOTHING;
  RETURN tidemark.reconcile_capture();
END
$$;

-- DDL following, where the login may create event triggers (superuser): a new table is
-- captured by the statement that creates it, and the schema change enters the changelog as a
-- DDL row, in commit order with the data changes around it.
CREATE FUNCTION tidemark.on_ddl_command_end() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT d.command_tag, d.object_identity, d.schema_name, c.relname, d.objid
      FROM pg_event_trigger_ddl_commands() d
      JOIN tidemark.captured_schema s ON s.schema_name = d.schema_name
      LEFT JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
     WHERE d.object_type IN ('table', 'table column', 'view', 'materialized view')
  LOOP
    PERFORM tidemark.reconcile_capture();
    INSERT INTO tidemark.changelog (relid, schema_name, table_name, op, after)
    VALUES (r.objid, r.schema_name, COALESCE(r.relname, r.object_identity), 'DDL',
            jsonb_build_object('command', r.command_tag, 'object', r.object_identity));
  END LOOP;
END
$$;

CREATE FUNCTION tidemark.on_sql_drop() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT d.object_identity, d.schema_name, d.object_name, d.objid
      FROM pg_event_trigger_dropped_objects() d
      JOIN tidemark.captured_schema s ON s.schema_name = d.schema_name
     WHERE d.original AND d.object_type IN ('table', 'view', 'materialized view')
  LOOP
    DELETE FROM tidemark.captured_table WHERE relid = r.objid;
    INSERT INTO tidemark.changelog (schema_name, table_name, op, after)
    VALUES (r.schema_name, r.object_name, 'DDL', jsonb_build_object('command', 'DROP', 'object', r.object_identity));
  END LOOP;
END
$$;

DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    CREATE EVENT TRIGGER tidemark_ddl_command_end ON ddl_command_end
      WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE', 'CREATE VIEW',
                   'CREATE MATERIALIZED VIEW', 'ALTER VIEW', 'COMMENT')
      EXECUTE FUNCTION tidemark.on_ddl_command_end();
    CREATE EVENT TRIGGER tidemark_sql_drop ON sql_drop
      WHEN TAG IN ('DROP TABLE', 'DROP VIEW', 'DROP MATERIALIZED VIEW', 'DROP SCHEMA')
      EXECUTE FUNCTION tidemark.on_sql_drop();
  END IF;
END
$$;

-- What the current transaction has captured so far, for change tools that plan a change in a
-- transaction they roll back. Callers need no rights on tidemark.changelog to use it.
CREATE FUNCTION tidemark.changes_of_current_transaction()
RETURNS TABLE (id bigint, schema_name text, table_name text, op text, key jsonb, before jsonb, after jsonb)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT c.id, c.schema_name, c.table_name, c.op, c.key, c.before, c.after
    FROM tidemark.changelog c
   WHERE c.xid = pg_current_xact_id_if_assigned()
   ORDER BY c.id
$$;
REVOKE ALL ON FUNCTION tidemark.changes_of_current_transaction() FROM PUBLIC;
GRANT USAGE ON SCHEMA tidemark TO tidemark_reader, tidemark_writer;
GRANT EXECUTE ON FUNCTION tidemark.changes_of_current_transaction() TO tidemark_reader, tidemark_writer;
