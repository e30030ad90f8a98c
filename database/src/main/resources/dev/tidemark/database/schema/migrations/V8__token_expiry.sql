-- A token may carry an expiry (tidemark token create --expires-in). Past it the token is refused
-- like a revoked one, and each gateway's revocation poll ends its streams, sessions and calls.
ALTER TABLE tidemark.api_token ADD COLUMN IF NOT EXISTS expires_at timestamptz;
COMMENT ON COLUMN tidemark.api_token.expires_at IS
  'When the token stops being valid; NULL: never (until revoked).';
CREATE INDEX IF NOT EXISTS api_token_expires_at ON tidemark.api_token (expires_at) WHERE expires_at IS NOT NULL;
