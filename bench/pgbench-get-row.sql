-- The statements one get_row call sends on a plain table (ReadTool.readOnly, CatalogCache and
-- GetRowTool), for pgbench -f -M prepared: what PostgreSQL alone does for a call, without HTTP,
-- JSON or the event bus. The table's shape comes from the node's catalog cache, so no catalog
-- lookup runs, and a plain table needs no DISCARD ALL. The caller's role and name are those of
-- `tidemark dev`'s read-write token.
\set id random(1, 500)
BEGIN READ ONLY;
SELECT set_config('role', 'tidemark_writer', true), set_config('statement_timeout', '5000', true), set_config('tidemark.caller', 'dev-read-write', true);
SELECT has_table_privilege('public.customers'::regclass, 'SELECT');
SELECT * FROM "public"."customers" WHERE "id" = :id::text::bigint LIMIT 1;
ROLLBACK;
