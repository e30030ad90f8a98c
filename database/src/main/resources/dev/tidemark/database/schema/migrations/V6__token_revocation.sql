-- Revocation reaches every gateway at once. A token that is revoked, or replaced by one of the
-- same name, gets invalidated_at and a notice on tidemark_token_revoked in the same transaction;
-- each gateway LISTENs for the notice and, as a fallback for a notice it missed, polls
-- invalidated_at every second. The notice carries nothing: it only asks the gateways to poll
-- now, so a forged one costs a query, never another caller's streams.
ALTER TABLE tidemark.api_token ADD COLUMN invalidated_at timestamptz;
COMMENT ON COLUMN tidemark.api_token.invalidated_at IS
  'When the token last stopped being valid (revoked, or replaced by one of the same name); set by a trigger.';
CREATE INDEX api_token_invalidated_at ON tidemark.api_token (invalidated_at) WHERE invalidated_at IS NOT NULL;

CREATE FUNCTION tidemark.token_invalidated() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL) OR NEW.token_hash IS DISTINCT FROM OLD.token_hash THEN
    -- clock_timestamp, not now(): a poll looks back a fixed margin from its own time, and the
    -- statement's time is closer to the commit than the transaction's start
    NEW.invalidated_at := clock_timestamp();
    PERFORM pg_notify('tidemark_token_revoked', '');
  END IF;
  RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION tidemark.token_invalidated() FROM PUBLIC;

CREATE TRIGGER api_token_invalidated BEFORE UPDATE ON tidemark.api_token
  FOR EACH ROW EXECUTE FUNCTION tidemark.token_invalidated();
