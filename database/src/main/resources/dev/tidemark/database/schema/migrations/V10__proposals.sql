-- Proposals: a committed plan that touches a table of database.approval-tables waits here for a
-- person's decision instead of being made (docs/change-tools.md#approvals-for-protected-tables).
-- Only Tidemark's login reads and writes these tables; people decide with `tidemark proposals`.
CREATE TABLE tidemark.proposal (
  id              text PRIMARY KEY,
  caller_id       text NOT NULL,
  caller_name     text NOT NULL,
  pg_role         text NOT NULL,
  tool            text NOT NULL,
  arguments       text NOT NULL,
  idempotency_key text NOT NULL,
  input_hash      text NOT NULL,
  fingerprint     text NOT NULL,
  tables          text[] NOT NULL,
  plan            jsonb NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applying', 'applied', 'rejected', 'failed')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  decided_at      timestamptz,
  decided_by      text,
  reason          text,
  outcome         jsonb,
  UNIQUE (caller_id, idempotency_key)
);
COMMENT ON COLUMN tidemark.proposal.arguments IS 'The change tool''s arguments as the proposer sent them (JSON text, in their order).';
COMMENT ON COLUMN tidemark.proposal.fingerprint IS 'The fingerprint of the rows the change touched when it was proposed: it is applied only if they are still so.';

-- Every step of every proposal: proposed, approved, rejected, applied, failed. An approval claims its
-- proposal ('applying') before it applies it, so that a rejection cannot land in between.
CREATE TABLE tidemark.proposal_audit (
  id          bigserial PRIMARY KEY,
  proposal_id text NOT NULL REFERENCES tidemark.proposal ON DELETE CASCADE,
  at          timestamptz NOT NULL DEFAULT now(),
  actor       text NOT NULL,
  action      text NOT NULL CHECK (action IN ('proposed', 'approved', 'rejected', 'applied', 'failed')),
  detail      jsonb
);
CREATE INDEX proposal_audit_proposal_idx ON tidemark.proposal_audit (proposal_id, id);
