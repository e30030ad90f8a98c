-- A caller is only ever itself. Caller statements run on connections that log in as the caller's
-- role, so PostgreSQL itself keeps them inside it; what Tidemark's own SQL functions accept from
-- such a connection is signed by the server and bound to the transaction. See docs/security.md.

-- The key ring: every node signs and encrypts what callers carry (cursors, plan ids) and what
-- these functions accept with the newest active key, and accepts every key not yet retired.
-- ipad and opad are the HMAC-SHA256 pads of the secret, kept so that SQL can check a MAC with
-- the built-in sha256() alone: HMAC(k, m) = sha256(opad || sha256(ipad || m)).
CREATE TABLE tidemark.key_ring (
  id          integer PRIMARY KEY,
  secret      bytea NOT NULL CHECK (length(secret) = 32),
  ipad        bytea NOT NULL CHECK (length(ipad) = 64),
  opad        bytea NOT NULL CHECK (length(opad) = 64),
  created_at  timestamptz NOT NULL DEFAULT now(),
  active_from timestamptz NOT NULL DEFAULT now(),
  retires_at  timestamptz
);
COMMENT ON TABLE tidemark.key_ring IS 'Keys that sign cursors, plan ids and caller identities; rotated by tidemark keys rotate.';

-- Adds a key. It signs from active_after seconds on (so that every node has loaded it first);
-- every older key still verifies for grace seconds, then retires.
CREATE FUNCTION tidemark.add_key(active_after_seconds integer, grace_seconds integer) RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  k       bytea := decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
  padded  bytea;
  ipad    bytea;
  opad    bytea;
  next_id integer;
BEGIN
  PERFORM pg_advisory_xact_lock(8388262611043690600);  -- one rotation at a time
  padded := k || decode(repeat('00', 32), 'hex');
  ipad := padded;
  opad := padded;
  FOR i IN 0 .. 63 LOOP
    ipad := set_byte(ipad, i, get_byte(padded, i) # 54);
    opad := set_byte(opad, i, get_byte(padded, i) # 92);
  END LOOP;
  SELECT coalesce(max(id), 0) + 1 INTO next_id FROM tidemark.key_ring;
  UPDATE tidemark.key_ring SET retires_at = now() + make_interval(secs => grace_seconds)
   WHERE retires_at IS NULL OR retires_at > now() + make_interval(secs => grace_seconds);
  INSERT INTO tidemark.key_ring (id, secret, ipad, opad, active_from)
  VALUES (next_id, k, ipad, opad, now() + make_interval(secs => active_after_seconds));
  DELETE FROM tidemark.key_ring WHERE retires_at < now() - interval '1 day';
  RETURN next_id;
END
$$;
SELECT tidemark.add_key(0, 0);

-- Whether mac is the HMAC-SHA256 (hex) of msg under a key that is not retired.
CREATE FUNCTION tidemark.mac_ok(msg text, mac text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT mac IS NOT NULL AND EXISTS (
    SELECT 1 FROM tidemark.key_ring k
     WHERE (k.retires_at IS NULL OR k.retires_at > now())
       AND encode(sha256(k.opad || sha256(k.ipad || convert_to(msg, 'UTF8'))), 'hex') = mac)
$$;

-- The caller Tidemark verified, for row-level-security policies: USING (owner = (SELECT tidemark.caller())).
-- The server sets tidemark.identity for each call to v1|<backend pid>|<expiry, ms since 1970>|<mac>|<name>;
-- a caller's SQL can change the setting, but cannot sign a value, so a forged identity is refused
-- (SQLSTATE 42501) and an absent one is NULL. Bound to the backend, it is worth nothing elsewhere.
CREATE FUNCTION tidemark.caller() RETURNS text
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t      text := current_setting('tidemark.identity', true);
  parts  text[];
  name   text;
BEGIN
  IF t IS NULL OR t = '' THEN
    RETURN NULL;
  END IF;
  parts := string_to_array(t, '|');
  IF array_length(parts, 1) < 5 OR parts[1] <> 'v1' THEN
    RAISE EXCEPTION 'tidemark.identity was not set by Tidemark' USING ERRCODE = '42501';
  END IF;
  name := array_to_string(parts[5:], '|');
  IF parts[2] <> pg_backend_pid()::text
     OR parts[3] !~ '^[0-9]{1,15}$'
     OR parts[3]::bigint < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
     OR NOT tidemark.mac_ok('identity|' || parts[2] || '|' || parts[3] || '|' || name, parts[4]) THEN
    RAISE EXCEPTION 'tidemark.identity was not set by Tidemark' USING ERRCODE = '42501';
  END IF;
  RETURN name;
END
$$;

-- Who made a committed change through Tidemark, keyed by transaction: written by record_commit
-- in the change's own transaction, read by the relay and changes_since beside the captured rows.
-- The capture trigger no longer reads settings a caller's SQL could set.
CREATE TABLE tidemark.change_attribution (
  xid             xid8 PRIMARY KEY,
  caller          text NOT NULL,
  tool            text NOT NULL,
  idempotency_key text,
  plan_id         text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX change_attribution_created_at_idx ON tidemark.change_attribution (created_at);

CREATE OR REPLACE FUNCTION tidemark.capture() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  img jsonb;
  k   jsonb;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    INSERT INTO tidemark.changelog (relid, schema_name, table_name, op) VALUES (TG_RELID, TG_TABLE_SCHEMA, TG_TABLE_NAME, 'TRUNCATE');
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
  INSERT INTO tidemark.changelog (relid, schema_name, table_name, op, key, before, after)
  VALUES (TG_RELID, TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP, k,
          CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,
          CASE WHEN TG_OP IN ('INSERT', 'UPDATE') THEN img END);
  RETURN NULL;
END
$$;

-- The changelog's position lock becomes a row lock on a table of Tidemark's own: any role may
-- take any advisory lock, so a caller's read could hold the old advisory position lock and stall
-- every captured commit; no caller role can lock a row of a table it has no rights on.
CREATE TABLE tidemark.position_lock (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton));
INSERT INTO tidemark.position_lock DEFAULT VALUES;
CREATE OR REPLACE FUNCTION tidemark.changelog_assign_position() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM tidemark.changelog_commit WHERE xid = NEW.xid) THEN
    RETURN NULL;
  END IF;
  PERFORM 1 FROM tidemark.position_lock FOR UPDATE;  -- held until the commit is visible
  INSERT INTO tidemark.changelog_commit (position, xid, committed_at)
  VALUES (nextval('tidemark.changelog_position_seq'), NEW.xid, clock_timestamp());
  PERFORM pg_notify('tidemark_changelog', '');
  RETURN NULL;
END
$$;

-- What the current transaction captured, for a change tool's plan and commit. Only with the
-- server's MAC over this transaction's id: a caller's own SQL could otherwise read before-images
-- of rows and columns its role may not read (a cascade into a table it cannot see). The server
-- shows each image only with the columns the login (the caller's role) may SELECT.
DROP FUNCTION tidemark.changes_of_current_transaction();
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
    FROM tidemark.changelog c
   WHERE c.xid = pg_current_xact_id()
   ORDER BY c.id;
END
$$;

-- Stores a commit's outcome under its idempotency key and who made the change, in the change's
-- own transaction. Only with the server's MAC over this transaction's id and every argument.
-- Returns 'recorded', 'key_used' (a concurrent commit took the key first: retry, and the lookup
-- finds its outcome) or 'plan_used' (the plan id was committed already).
CREATE FUNCTION tidemark.record_commit(caller_id text, caller_name text, idem_key text, input_hash text, plan_hash text,
                                       plan_id text, tool text, outcome text, retention_hours integer, mac text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  n integer;
BEGIN
  IF NOT tidemark.mac_ok(concat_ws('|', 'record', pg_current_xact_id()::text,
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
  INSERT INTO tidemark.change_attribution (xid, caller, tool, idempotency_key, plan_id)
  VALUES (pg_current_xact_id(), caller_name, tool, idem_key, nullif(plan_id, ''))
  ON CONFLICT (xid) DO NOTHING;
  RETURN 'recorded';
END
$$;

-- No caller role may run any of Tidemark's functions but the three above, which check a MAC or
-- return only the verified identity; schema usage is what calling them takes.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tidemark FROM PUBLIC;
ALTER DEFAULT PRIVILEGES IN SCHEMA tidemark REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
REVOKE ALL ON SCHEMA tidemark FROM tidemark_reader, tidemark_writer;
GRANT USAGE ON SCHEMA tidemark TO PUBLIC;
GRANT EXECUTE ON FUNCTION tidemark.caller() TO PUBLIC;
GRANT EXECUTE ON FUNCTION tidemark.changes_of_current_transaction(text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION tidemark.record_commit(text, text, text, text, text, text, text, text, integer, text) TO PUBLIC;
