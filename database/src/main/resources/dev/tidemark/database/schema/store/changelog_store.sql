-- The changelog's tables in a database of Tidemark's own (database.changelog-url), as the
-- migrations of the served database leave them at version 18: what the relay stores there and
-- the tools read there. Creating them is idempotent; Tidemark takes an advisory lock around it,
-- so several nodes and tidemark migrate may run it at once.
CREATE SCHEMA IF NOT EXISTS tidemark;

CREATE TABLE IF NOT EXISTS tidemark.changelog (
  id              bigserial PRIMARY KEY,
  xid             xid8 NOT NULL,
  relid           oid,
  schema_name     text NOT NULL,
  table_name      text NOT NULL,
  op              text NOT NULL CHECK (op IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'DDL')),
  key             jsonb,
  before          jsonb,
  after           jsonb,
  changed_at      timestamptz NOT NULL,
  caller          text,
  tool            text,
  idempotency_key text,
  plan_id         text
);
CREATE INDEX IF NOT EXISTS changelog_xid_idx ON tidemark.changelog (xid, id);

CREATE TABLE IF NOT EXISTS tidemark.changelog_commit (
  position     bigint PRIMARY KEY,
  xid          xid8 NOT NULL UNIQUE,
  committed_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS changelog_commit_time_idx ON tidemark.changelog_commit (committed_at);

CREATE TABLE IF NOT EXISTS tidemark.changelog_state (
  singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  secret           text NOT NULL DEFAULT (gen_random_uuid()::text || gen_random_uuid()::text),
  published_commit bigint NOT NULL DEFAULT 0,
  published_change bigint NOT NULL DEFAULT 0,
  pruned_commit    bigint NOT NULL DEFAULT 0,
  pruned_change    bigint NOT NULL DEFAULT 0,
  decoding_from    bigint,
  decoded_lsn      bigint NOT NULL DEFAULT 0,
  -- when the changelog the served database held before was moved here (null: not yet)
  moved_at         timestamptz
);
INSERT INTO tidemark.changelog_state DEFAULT VALUES ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS tidemark.change_attribution (
  xid             xid8 PRIMARY KEY,
  caller          text NOT NULL,
  tool            text NOT NULL,
  idempotency_key text,
  plan_id         text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS change_attribution_created_at_idx ON tidemark.change_attribution (created_at);

CREATE TABLE IF NOT EXISTS tidemark.changelog_relation (
  relid         oid PRIMARY KEY,
  key_columns   text[],
  other_columns boolean NOT NULL
);
