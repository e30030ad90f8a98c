-- Capture by PostgreSQL's logical decoding instead of triggers and a position lock: nothing runs
-- in the commit path of writers outside Tidemark. See docs/changelog.md.
--
-- Before this migration runs, Migrator created the publication tidemark_changes (empty) and this
-- database's replication slot, in their own transactions (a slot cannot be created by a
-- transaction that has written). This transaction takes the capture triggers off every captured
-- table, puts the tables in the publication, and emits the switch message: the relay drops every
-- decoded transaction that committed before this one (the triggers captured those), and decodes
-- every transaction that commits after it (no trigger captures those). Nothing is lost or doubled.

-- The captured tables first, in one order: a writer inside a capture trigger holds its table and
-- waits for tidemark.changelog, which this migration alters, so taking the tables later could deadlock.
-- Writers wait for this transaction; nothing they commit after it has a trigger.
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT c.oid::regclass AS rel FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid ORDER BY c.oid LOOP
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.rel);
  END LOOP;
END
$$;

-- The position lock and the trigger that drew positions at commit are gone: a change's position is
-- now its transaction's commit LSN, which the decoder reads from the WAL.
DROP TRIGGER IF EXISTS changelog_assign_position ON tidemark.changelog;
DROP FUNCTION IF EXISTS tidemark.changelog_assign_position();
DROP TABLE IF EXISTS tidemark.position_lock;
DROP SEQUENCE IF EXISTS tidemark.changelog_position_seq;
DO $$
BEGIN
  IF (SELECT coalesce(max(position), 0) FROM tidemark.changelog_commit) >= pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') THEN
    RAISE EXCEPTION 'changelog positions run ahead of the WAL; cannot switch to commit LSN positions';
  END IF;
END
$$;
ALTER TABLE tidemark.changelog ALTER COLUMN xid DROP DEFAULT;
ALTER TABLE tidemark.changelog ALTER COLUMN changed_at DROP DEFAULT;

-- decoding_from: the commit LSN of the switch (NULL until the relay decoded it); decoded_lsn: every
-- transaction that committed before it is stored in tidemark.changelog (staleness checks wait for it).
ALTER TABLE tidemark.changelog_state ADD COLUMN decoding_from bigint, ADD COLUMN decoded_lsn bigint NOT NULL DEFAULT 0;

-- What the reconcile found about each captured table: published or not, and why not.
-- original_identity: the table's replica identity before Tidemark set FULL ('d', 'n', 'f' or 'i:<index>'),
-- which tidemark uninstall puts back.
ALTER TABLE tidemark.captured_table ADD COLUMN published boolean NOT NULL DEFAULT false, ADD COLUMN problem text,
  ADD COLUMN original_identity text;

-- What a plan's (or commit's) own transaction changed, written only while that transaction carries
-- tidemark.plan = 'on' (see the WHEN of the tidemark_capture triggers); a plan rolls back, and a
-- commit deletes its rows in record_commit, so rows stay only from a transaction of someone else
-- that set the setting itself: the relay prunes those after an hour.
CREATE TABLE tidemark.plan_change (
  id          bigserial PRIMARY KEY,
  xid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
  relid       oid,
  schema_name text NOT NULL,
  table_name  text NOT NULL,
  op          text NOT NULL,
  key         jsonb,
  before      jsonb,
  after       jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plan_change_xid_idx ON tidemark.plan_change (xid, id);

CREATE OR REPLACE FUNCTION tidemark.capture() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  img jsonb;
  k   jsonb;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    INSERT INTO tidemark.plan_change (relid, schema_name, table_name, op) VALUES (TG_RELID, TG_TABLE_SCHEMA, TG_TABLE_NAME, 'TRUNCATE');
    RETURN NULL;
  END IF;
  img := CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END;
  IF TG_NARGS = 0 THEN
    k := img;
  ELSE
    k := '[]'::jsonb;
    FOR i IN 0 .. TG_NARGS - 1 LOOP
      k := k || jsonb_build_array(img -> TG_ARGV[i]);
    END LOOP;
  END IF;
  INSERT INTO tidemark.plan_change (relid, schema_name, table_name, op, key, before, after)
  VALUES (TG_RELID, TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP, k,
          CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,
          CASE WHEN TG_OP IN ('INSERT', 'UPDATE') THEN img END);
  RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION tidemark.capture() FROM PUBLIC;

DROP FUNCTION tidemark.changes_of_current_transaction(text);
CREATE FUNCTION tidemark.changes_of_current_transaction(mac text)
RETURNS TABLE (id bigint, schema_name text, table_name text, op text, key jsonb, before jsonb, after jsonb,
               readable_columns text[], row_security boolean)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT tidemark.mac_ok('changes|' || pg_current_xact_id()::text, mac) THEN
    RAISE EXCEPTION 'only Tidemark may read what a transaction captured' USING ERRCODE = '42501';
  END IF;
  RETURN QUERY
  SELECT c.id, c.schema_name, c.table_name, c.op, c.key, c.before, c.after,
         ARRAY(SELECT a.attname::text FROM pg_attribute a
                WHERE a.attrelid = c.relid AND a.attnum > 0 AND NOT a.attisdropped
                  AND has_column_privilege(session_user, c.relid, a.attnum, 'SELECT')),
         coalesce((SELECT cls.relrowsecurity FROM pg_class cls WHERE cls.oid = c.relid), false)
           AND NOT (SELECT r.rolbypassrls OR r.rolsuper FROM pg_roles r WHERE r.rolname = session_user)
    FROM tidemark.plan_change c
   WHERE c.xid = pg_current_xact_id()
   ORDER BY c.id;
END
$$;

-- HMAC-SHA256 (hex) of msg under the newest active key, prefixed with that key's id and '.'.
CREATE FUNCTION tidemark.sign(msg text) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT k.id::text || '.' || encode(sha256(k.opad || sha256(k.ipad || convert_to(msg, 'UTF8'))), 'hex')
    FROM tidemark.key_ring k
   WHERE (k.retires_at IS NULL OR k.retires_at > now()) AND k.active_from <= now()
   ORDER BY k.id DESC LIMIT 1
$$;

-- Who made the change: a transactional logical message, signed and bound to this transaction's id,
-- that the relay checks before it writes tidemark.change_attribution. Any role can emit a logical
-- message, none can sign one. The rows the triggers wrote for the commit's own check go.
CREATE OR REPLACE FUNCTION tidemark.record_commit(caller_id text, caller_name text, idem_key text, input_hash text, plan_hash text,
                                       plan_id text, tool text, outcome text, retention_hours integer, mac text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  n       integer;
  xid     text := pg_current_xact_id()::text;
  body    jsonb;
BEGIN
  IF NOT tidemark.mac_ok(concat_ws('|', 'record', xid,
        encode(sha256(convert_to(coalesce(caller_id, ''), 'UTF8')), 'hex'),
        encode(sha256(convert_to(coalesce(caller_name, ''), 'UTF8')), 'hex'),
        encode(sha256(convert_to(coalesce(idem_key, ''), 'UTF8')), 'hex'),
        encode(sha256(convert_to(coalesce(input_hash, ''), 'UTF8')), 'hex'),
        encode(sha256(convert_to(coalesce(plan_hash, ''), 'UTF8')), 'hex'),
        encode(sha256(convert_to(coalesce(plan_id, ''), 'UTF8')), 'hex'),
        encode(sha256(convert_to(coalesce(tool, ''), 'UTF8')), 'hex'),
        encode(sha256(convert_to(coalesce(outcome, ''), 'UTF8')), 'hex'),
        retention_hours::text), mac) THEN
    RAISE EXCEPTION 'only Tidemark may record a commit' USING ERRCODE = '42501';
  END IF;
  DELETE FROM tidemark.idempotency i
   WHERE i.caller = caller_id AND i.key = idem_key AND i.created_at <= now() - make_interval(hours => retention_hours);
  INSERT INTO tidemark.idempotency (caller, key, input_hash, plan_hash, outcome)
  VALUES (caller_id, idem_key, input_hash, plan_hash, outcome::jsonb)
  ON CONFLICT DO NOTHING;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n = 0 THEN
    IF EXISTS (SELECT 1 FROM tidemark.idempotency i WHERE i.caller = caller_id AND i.key = idem_key) THEN
      RETURN 'key_used';
    END IF;
    RETURN 'plan_used';
  END IF;
  body := jsonb_build_object('xid', xid, 'caller', caller_name, 'tool', tool, 'idempotency_key', idem_key,
                             'plan_id', nullif(plan_id, ''));
  PERFORM pg_logical_emit_message(true, 'tidemark.attribution',
      jsonb_build_object('body', body::text, 'mac', tidemark.sign('attribution|' || body::text))::text);
  DELETE FROM tidemark.plan_change WHERE plan_change.xid = pg_current_xact_id();
  RETURN 'recorded';
END
$$;

-- Puts every table of the captured schemas in the publication, with REPLICA IDENTITY FULL (full
-- before-images, and unchanged TOASTed values the decoder fills from them), and a plan trigger that
-- does nothing unless the transaction carries tidemark.plan = 'on'. A table that cannot get a
-- replica identity is not published (its applications' UPDATE and DELETE would fail): it is named
-- in captured_table.problem. Returns how many tables it touched.
CREATE OR REPLACE FUNCTION tidemark.reconcile_capture() RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r        record;
  touched  integer := 0;
  args     text;
  problem  text;
  publish  boolean;
  ident    "char";
  original text;
BEGIN
  PERFORM pg_advisory_xact_lock(8388262610923431013);  -- 'tmcaptur': reconciles one at a time
  PERFORM set_config('tidemark.reconciling', 'on', true);
  FOR r IN
    SELECT c.oid AS relid, n.nspname, c.relname, c.relreplident,
           COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
                       FROM pg_index i
                       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                      WHERE i.indrelid = c.oid AND i.indisprimary), '{}') AS key_columns,
           t.key_columns AS have, t.published AS was_published, t.problem AS had_problem,
           EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
                    WHERE p.pubname = 'tidemark_changes' AND pr.prrelid = c.oid) AS in_publication,
           EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = c.oid AND tgname = 'tidemark_capture'
                     AND pg_get_triggerdef(oid) LIKE '%tidemark.plan%') AS has_plan_trigger
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN tidemark.captured_schema s ON s.schema_name = n.nspname
      LEFT JOIN tidemark.captured_table t ON t.relid = c.oid
     WHERE c.relkind = 'r' AND NOT c.relispartition AND n.nspname <> 'tidemark'
  LOOP
    IF r.have IS NOT NULL AND r.have = r.key_columns AND r.has_plan_trigger AND r.relreplident = 'f'
       AND r.in_publication AND r.was_published AND r.had_problem IS NULL THEN
      CONTINUE;
    END IF;
    problem := NULL;
    ident := r.relreplident;
    original := CASE WHEN ident = 'i' THEN 'i:' || (SELECT quote_ident(ic.relname) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                                                    WHERE i.indrelid = r.relid AND i.indisreplident) ELSE ident::text END;
    IF ident <> 'f' THEN
      BEGIN
        EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY FULL', r.nspname, r.relname);
        ident := 'f';
      EXCEPTION WHEN insufficient_privilege THEN
        problem := 'REPLICA IDENTITY FULL could not be set (the login does not own the table)';
      END;
    END IF;
    -- without a replica identity, publishing a table makes every UPDATE and DELETE on it fail
    publish := ident = 'f' OR ident = 'i' OR (ident = 'd' AND cardinality(r.key_columns) > 0);
    IF NOT publish THEN
      problem := concat_ws(', and ', problem, 'the table has no primary key: not published; set REPLICA IDENTITY FULL on it as its owner');
    ELSIF problem IS NOT NULL THEN
      problem := problem || ': before-images hold only the primary key';
    END IF;
    IF publish AND NOT r.in_publication THEN
      BEGIN
        EXECUTE format('ALTER PUBLICATION tidemark_changes ADD TABLE %I.%I', r.nspname, r.relname);
      EXCEPTION WHEN insufficient_privilege THEN
        publish := false;
        problem := 'the login may not add the table to the publication (it must own the table): not published';
      END;
    ELSIF NOT publish AND r.in_publication THEN
      EXECUTE format('ALTER PUBLICATION tidemark_changes DROP TABLE %I.%I', r.nspname, r.relname);
    END IF;
    IF NOT (r.has_plan_trigger AND r.have IS NOT NULL AND r.have = r.key_columns) THEN
      SELECT string_agg(quote_literal(col), ', ') INTO args FROM unnest(r.key_columns) AS col;
      BEGIN
        EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture ON %I.%I', r.nspname, r.relname);
        EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture_truncate ON %I.%I', r.nspname, r.relname);
        EXECUTE format('CREATE TRIGGER tidemark_capture AFTER INSERT OR UPDATE OR DELETE ON %I.%I FOR EACH ROW '
                       'WHEN (pg_catalog.current_setting(''tidemark.plan'', true) = ''on'') '
                       'EXECUTE FUNCTION tidemark.capture(%s)', r.nspname, r.relname, COALESCE(args, ''));
        EXECUTE format('CREATE TRIGGER tidemark_capture_truncate AFTER TRUNCATE ON %I.%I FOR EACH STATEMENT '
                       'WHEN (pg_catalog.current_setting(''tidemark.plan'', true) = ''on'') '
                       'EXECUTE FUNCTION tidemark.capture()', r.nspname, r.relname);
      EXCEPTION WHEN insufficient_privilege THEN
        problem := concat_ws('; ', problem, 'no plan trigger (the login needs TRIGGER on the table): change tools cannot plan changes to it');
      END;
    END IF;
    INSERT INTO tidemark.captured_table (relid, key_columns, published, problem, original_identity)
    VALUES (r.relid, r.key_columns, publish, problem, original)
      ON CONFLICT (relid) DO UPDATE SET key_columns = EXCLUDED.key_columns, published = EXCLUDED.published, problem = EXCLUDED.problem,
        original_identity = coalesce(tidemark.captured_table.original_identity, EXCLUDED.original_identity);
    touched := touched + 1;
  END LOOP;
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
      IF EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
                  WHERE p.pubname = 'tidemark_changes' AND pr.prrelid = r.relid) THEN
        EXECUTE format('ALTER PUBLICATION tidemark_changes DROP TABLE %I.%I', r.nspname, r.relname);
      END IF;
    END IF;
    DELETE FROM tidemark.captured_table WHERE relid = r.relid;
    touched := touched + 1;
  END LOOP;
  PERFORM set_config('tidemark.reconciling', '', true);
  RETURN touched;
END
$$;

-- DDL following where the login may create event triggers: the table is published by the statement
-- that creates it, and the schema change enters the WAL as a transactional message, so the relay
-- writes its DDL row in commit order with the data changes around it.
CREATE OR REPLACE FUNCTION tidemark.on_ddl_command_end() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
BEGIN
  IF current_setting('tidemark.reconciling', true) = 'on' THEN
    RETURN;  -- the reconcile's own ALTER TABLE
  END IF;
  FOR r IN
    SELECT d.command_tag, d.object_identity, d.schema_name, c.relname, d.objid
      FROM pg_event_trigger_ddl_commands() d
      JOIN tidemark.captured_schema s ON s.schema_name = d.schema_name
      LEFT JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
     WHERE d.object_type IN ('table', 'table column', 'view', 'materialized view')
  LOOP
    PERFORM tidemark.reconcile_capture();
    PERFORM pg_logical_emit_message(true, 'tidemark.ddl', jsonb_build_object('relid', r.objid, 'schema', r.schema_name,
        'table', COALESCE(r.relname, r.object_identity), 'command', r.command_tag, 'object', r.object_identity)::text);
  END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION tidemark.on_sql_drop() RETURNS event_trigger
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
    PERFORM pg_logical_emit_message(true, 'tidemark.ddl', jsonb_build_object('schema', r.schema_name,
        'table', r.object_name, 'command', 'DROP', 'object', r.object_identity)::text);
  END LOOP;
END
$$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tidemark FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tidemark.caller() TO PUBLIC;
GRANT EXECUTE ON FUNCTION tidemark.changes_of_current_transaction(text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION tidemark.record_commit(text, text, text, text, text, text, text, text, integer, text) TO PUBLIC;

-- The switch: every captured table moves from its capture triggers to the publication here.
SELECT tidemark.reconcile_capture();
SELECT pg_logical_emit_message(true, 'tidemark.switch', '');
