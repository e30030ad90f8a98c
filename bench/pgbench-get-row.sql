-- The statements one get_row call sends (ReadTool.readOnly + TableCatalog.resolve + GetRowTool),
-- for pgbench -f: what PostgreSQL alone does for a call, without HTTP, JSON or the event bus.
-- The caller's role and name are those of `tidemark dev`'s read-write token.
\set id random(1, 500)
BEGIN READ ONLY;
SET LOCAL ROLE "tidemark_writer";
SET LOCAL statement_timeout = 30000;
SELECT set_config('tidemark.caller', 'dev-read-write', true);
SELECT c.oid::int8 AS oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind,
       obj_description(c.oid, 'pg_class') AS comment, c.relrowsecurity AS rls,
       CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END AS estimated_rows,
       COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
                   FROM pg_index i
                   CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                   JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                  WHERE i.indrelid = c.oid AND i.indisprimary), '{}') AS primary_key,
       COALESCE((SELECT json_agg(json_build_object(
                          'name', a.attname::text, 'type', format_type(a.atttypid, a.atttypmod),
                          'cast_type', format_type(a.atttypid, NULL), 'nullable', NOT a.attnotnull,
                          'default_expr', pg_get_expr(d.adbin, d.adrelid), 'comment', col_description(a.attrelid, a.attnum),
                          'category', t.typcategory::text) ORDER BY a.attnum)
                   FROM pg_attribute a
                   JOIN pg_type t ON t.oid = a.atttypid
                   LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '[]'::json) AS columns
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
   AND n.nspname = ANY(ARRAY['public']::text[]) AND n.nspname <> 'tidemark'
   AND c.relname = 'customers'::text
   AND has_table_privilege(c.oid, 'SELECT')
 ORDER BY array_position(ARRAY['public']::text[], n.nspname::text)
 LIMIT 1;
SELECT * FROM "public"."customers" WHERE "id" = :id::text::bigint LIMIT 1;
ROLLBACK;
DISCARD ALL;
