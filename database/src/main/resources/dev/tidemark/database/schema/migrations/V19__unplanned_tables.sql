-- Plans by choice: the tables of database.unplanned-tables carry no plan trigger, so that their
-- other writers pay nothing for Tidemark's plans (every statement on a table with a row trigger
-- pays for making its WHEN ready, even when it is false). The changelog role writes the configured
-- names here; the reconcile (and the DDL trigger that runs it) reads them. A change tool's change
-- that writes rows of such a table, itself or through a cascade or a trigger, cannot be shown or
-- checked, and is refused: tidemark.unplanned_counts() tells the command service which of them
-- the transaction wrote, from PostgreSQL's own per-transaction counts.
CREATE TABLE tidemark.capture_unplanned (pattern text PRIMARY KEY);
ALTER TABLE tidemark.captured_table ADD COLUMN planned boolean NOT NULL DEFAULT true;

-- A name of database.unplanned-tables: schema.name, a name in any served schema, schema.* or *.
CREATE FUNCTION tidemark.unplanned_chosen(schema_name name, table_name name) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT EXISTS (SELECT 1 FROM tidemark.capture_unplanned k
                  WHERE k.pattern IN ('*', schema_name || '.*', schema_name || '.' || table_name, table_name::text))
$$;

-- Replaces the captured schemas (database.schemas), the key-only tables (database.key-only-tables)
-- and the unplanned tables (database.unplanned-tables), and reconciles at once.
CREATE FUNCTION tidemark.capture_schemas(wanted text[], key_only text[], unplanned text[]) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  DELETE FROM tidemark.capture_unplanned WHERE pattern <> ALL (unplanned);
  INSERT INTO tidemark.capture_unplanned (pattern) SELECT DISTINCT u FROM unnest(unplanned) AS u ON CONFLICT DO NOTHING;
  RETURN tidemark.capture_schemas(wanted, key_only);
END
$$;

-- The rows the current transaction (with whatever this connection has not reported yet: callers
-- compare two readings) inserted, updated and deleted in each captured table without a plan
-- trigger, as {"schema.table": rows}. Schema changes are not counted: a plan trigger sees none of
-- them either, so a migration treats both kinds of table alike. Table names are no secret
-- (pg_class is readable by every role), and the counts are this connection's own.
CREATE FUNCTION tidemark.unplanned_counts() RETURNS jsonb
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_object_agg(format('%I.%I', n.nspname, c.relname), x.n), '{}')
    FROM (SELECT t.relid, pg_stat_get_xact_tuples_inserted(t.relid) + pg_stat_get_xact_tuples_updated(t.relid)
                          + pg_stat_get_xact_tuples_deleted(t.relid) AS n
            FROM tidemark.captured_table t
           WHERE NOT t.planned) x
    JOIN pg_class c ON c.oid = x.relid
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE x.n > 0
$$;

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
  wanted   "char";
  plans    boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(8388262610923431013);  -- 'tmcaptur': reconciles one at a time
  PERFORM set_config('tidemark.reconciling', 'on', true);
  FOR r IN
    SELECT c.oid AS relid, n.nspname, c.relname, c.relreplident, pg_has_role(c.relowner, 'USAGE') AS owned,
           COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
                       FROM pg_index i
                       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                      WHERE i.indrelid = c.oid AND i.indisprimary), '{}') AS key_columns,
           t.key_columns AS have, t.published AS was_published, t.problem AS had_problem,
           EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
                    WHERE p.pubname = 'tidemark_changes' AND pr.prrelid = c.oid) AS in_publication,
           EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = c.oid AND tgname = 'tidemark_capture'
                     AND pg_get_triggerdef(oid) LIKE '%tidemark.plan%') AS has_plan_trigger,
           tidemark.key_only_chosen(n.nspname, c.relname) AS key_only,
           tidemark.unplanned_chosen(n.nspname, c.relname) AS unplanned, t.planned AS was_planned
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN tidemark.captured_schema s ON s.schema_name = n.nspname
      LEFT JOIN tidemark.captured_table t ON t.relid = c.oid
     WHERE c.relkind = 'r' AND NOT c.relispartition AND n.nspname <> 'tidemark'
  LOOP
    -- key-only is kept to tables with a primary key: without one, the old row is what names the row
    wanted := CASE WHEN r.key_only AND cardinality(r.key_columns) > 0 THEN 'd' ELSE 'f' END;
    plans := NOT r.unplanned;
    IF r.have IS NOT NULL AND r.have = r.key_columns AND r.has_plan_trigger = plans AND r.was_planned = plans AND r.relreplident = wanted
       AND r.in_publication AND r.was_published AND r.had_problem IS NULL THEN
      CONTINUE;
    END IF;
    problem := NULL;
    ident := r.relreplident;
    original := CASE WHEN ident = 'i' THEN 'i:' || (SELECT quote_ident(ic.relname) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                                                    WHERE i.indrelid = r.relid AND i.indisreplident) ELSE ident::text END;
    IF NOT r.owned THEN
      -- only a table's owner may set its replica identity or add it to a publication (or take it out):
      -- a table someone published for Tidemark stays published, any other is named, never half done
      publish := r.in_publication AND (ident = 'f' OR ident = 'i' OR (ident = 'd' AND cardinality(r.key_columns) > 0));
      IF NOT r.in_publication THEN
        problem := 'not published: the login does not own the table, and only its owner may publish it; run tidemark migrate as'
                   || ' its owner (or as a superuser), or as the owner: ALTER TABLE ' || format('%I.%I', r.nspname, r.relname)
                   || CASE WHEN wanted = 'f' THEN ' REPLICA IDENTITY FULL' ELSE ' REPLICA IDENTITY DEFAULT' END
                   || '; ALTER PUBLICATION tidemark_changes ADD TABLE ' || format('%I.%I', r.nspname, r.relname);
      ELSIF NOT publish THEN
        problem := 'published without a replica identity that names its rows: its owner must set REPLICA IDENTITY FULL on it';
      ELSIF ident <> 'f' AND wanted = 'f' THEN
        problem := 'before-images hold only the replica identity''s columns: its owner may set REPLICA IDENTITY FULL on it';
      END IF;
    ELSE
      IF ident <> wanted THEN
        EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY %s', r.nspname, r.relname,
                       CASE WHEN wanted = 'f' THEN 'FULL' ELSE 'DEFAULT' END);
        ident := wanted;
      END IF;
      publish := true;
      IF NOT r.in_publication THEN
        EXECUTE format('ALTER PUBLICATION tidemark_changes ADD TABLE %I.%I', r.nspname, r.relname);
      END IF;
    END IF;
    IF NOT plans THEN
      -- database.unplanned-tables: no row trigger at all, so the table's writers pay nothing for
      -- plans; a change tool's change that writes its rows is refused (tidemark.unplanned_counts)
      IF r.has_plan_trigger THEN
        BEGIN
          EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture ON %I.%I', r.nspname, r.relname);
          EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture_truncate ON %I.%I', r.nspname, r.relname);
        EXCEPTION WHEN insufficient_privilege THEN
          problem := concat_ws('; ', problem, 'keeps its plan trigger (the login needs TRIGGER on the table to drop it)');
        END;
      END IF;
    ELSIF NOT (r.has_plan_trigger AND r.have IS NOT NULL AND r.have = r.key_columns) THEN
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
    INSERT INTO tidemark.captured_table (relid, key_columns, published, problem, original_identity, planned)
    VALUES (r.relid, r.key_columns, publish, problem, original, plans)
      ON CONFLICT (relid) DO UPDATE SET key_columns = EXCLUDED.key_columns, published = EXCLUDED.published, problem = EXCLUDED.problem,
        planned = EXCLUDED.planned,
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

ALTER FUNCTION tidemark.reconcile_capture() SET client_min_messages = warning;
REVOKE ALL ON FUNCTION tidemark.reconcile_capture() FROM PUBLIC;
REVOKE ALL ON FUNCTION tidemark.capture_schemas(text[], text[], text[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION tidemark.unplanned_chosen(name, name) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tidemark.unplanned_counts() TO PUBLIC;
