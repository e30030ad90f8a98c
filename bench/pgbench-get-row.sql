-- The statement one get_row call sends on a plain table (CatalogCache.readPlain and GetRowTool),
-- for pgbench -f -M prepared: what PostgreSQL alone does for a call, without HTTP, JSON or the
-- event bus. One SELECT in its own implicit transaction, with the relation gate and the row-size
-- guard (SizeGuard) of the real statement; Tidemark sends it on a connection of the caller's role,
-- which pgbench's login stands in for here. The table's shape comes from the node's catalog cache,
-- so no catalog lookup runs, and a plain table needs no DISCARD ALL.
\set id random(1, 500)
SELECT "id", "external_id", CASE WHEN _tidemark_size._tidemark_fits THEN "name" END AS "name",
       CASE WHEN _tidemark_size._tidemark_fits THEN "email" END AS "email",
       CASE WHEN _tidemark_size._tidemark_fits THEN "notes" END AS "notes",
       CASE WHEN _tidemark_size._tidemark_fits THEN "tags" END AS "tags", "created_at", _tidemark_size._tidemark_n
  FROM "public"."customers"
  CROSS JOIN LATERAL (SELECT s AS _tidemark_n, s <= 4194304::int8 AS _tidemark_fits
                        FROM (SELECT (COALESCE(octet_length("name"), 0) + COALESCE(octet_length("email"), 0)
                                + COALESCE(octet_length("notes"), 0) + COALESCE(octet_length("tags"::text), 0))::int8 AS s)
                          AS _tidemark_s) AS _tidemark_size
 WHERE "id" = :id::text::bigint AND 'public.customers'::regclass = 'public.customers'::regclass LIMIT 1;
