-- A function in SQL that PostgreSQL cannot inline (a SECURITY DEFINER one, or one called from
-- PL/pgSQL) is planned again on every call. tidemark.mac_ok runs about three times per plan and
-- commit (and once per tidemark.caller() of a row-level-security policy), and tidemark.sign once
-- per commit: planning them cost more of the server's CPU than running them
-- (docs/performance.md). In PL/pgSQL their statement is planned once per session.
CREATE OR REPLACE FUNCTION tidemark.mac_ok(msg text, mac text) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN mac IS NOT NULL AND EXISTS (
    SELECT 1 FROM tidemark.key_ring k
     WHERE (k.retires_at IS NULL OR k.retires_at > now())
       AND encode(sha256(k.opad || sha256(k.ipad || convert_to(msg, 'UTF8'))), 'hex') = mac);
END
$$;

CREATE OR REPLACE FUNCTION tidemark.sign(msg text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN (SELECT k.id::text || '.' || encode(sha256(k.opad || sha256(k.ipad || convert_to(msg, 'UTF8'))), 'hex')
            FROM tidemark.key_ring k
           WHERE (k.retires_at IS NULL OR k.retires_at > now()) AND k.active_from <= now()
           ORDER BY k.id DESC LIMIT 1);
END
$$;
