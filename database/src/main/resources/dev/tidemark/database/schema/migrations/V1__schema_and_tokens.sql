-- Tidemark's own schema. Callers never see it: every read tool and resource leaves it out.
CREATE TABLE IF NOT EXISTS tidemark.api_token (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name        text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
  token_hash  text NOT NULL UNIQUE,
  pg_role     text NOT NULL,
  access      text NOT NULL CHECK (access IN ('read-write', 'read-only')),
  databases   text[] NOT NULL DEFAULT '{*}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
COMMENT ON TABLE tidemark.api_token IS 'Bearer tokens, stored as SHA-256 hashes; the token itself is shown once, when created.';
