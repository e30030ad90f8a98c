-- An approval writes exactly the rows people were shown, or nothing
-- (docs/change-tools.md#approvals-for-protected-tables). A proposal keeps every row its change
-- writes, cascades and trigger effects included, with its before and after images, and the hash of
-- those images as PostgreSQL wrote them; the approval runs the change again as its proposer and
-- commits only when the images it writes hash the same. Otherwise the proposal is 'stale'; a
-- proposal whose proposer's token ended, or whose role may no longer make the change, is 'void'.
ALTER TABLE tidemark.proposal ADD COLUMN row_images json, ADD COLUMN images_hash text;
COMMENT ON COLUMN tidemark.proposal.row_images IS
  'Every row the change writes, as people are shown it: table, op, key, before, after (json, not jsonb: columns in table order).';
COMMENT ON COLUMN tidemark.proposal.images_hash IS
  'The hash of every written row''s images as the capture triggers recorded them: an approval writes only images that hash the same.';
COMMENT ON COLUMN tidemark.proposal.fingerprint IS
  'The fingerprint of the rows the change touched when it was proposed, as a plan''s; an approval compares images_hash, which covers the after-images too.';

ALTER TABLE tidemark.proposal DROP CONSTRAINT proposal_status_check,
  ADD CONSTRAINT proposal_status_check
  CHECK (status IN ('pending', 'applying', 'applied', 'rejected', 'failed', 'stale', 'void'));
ALTER TABLE tidemark.proposal_audit DROP CONSTRAINT proposal_audit_action_check,
  ADD CONSTRAINT proposal_audit_action_check
  CHECK (action IN ('proposed', 'approved', 'rejected', 'applied', 'failed', 'stale', 'void'));
