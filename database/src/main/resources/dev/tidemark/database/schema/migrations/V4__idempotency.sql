-- Change tools: the outcome of every commit under its idempotency key, written in the same
-- transaction as the change. See docs/change-tools.md.
CREATE TABLE tidemark.idempotency (
  caller     text NOT NULL,
  key        text NOT NULL,
  input_hash text NOT NULL,
  -- a hash of the plan id a commit used: a plan commits at most once, whatever the key
  plan_hash  text UNIQUE,
  outcome    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (caller, key)
);
CREATE INDEX idempotency_created_at_idx ON tidemark.idempotency (created_at);
COMMENT ON TABLE tidemark.idempotency IS 'Outcomes of committed changes by (caller, idempotency_key); pruned after idempotency.retention-hours.';
