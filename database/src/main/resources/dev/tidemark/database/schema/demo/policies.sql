-- Row-level security with the caller Tidemark verified: each caller sees and changes only its own
-- notes. tidemark.caller() returns the caller's name (the token's name); a caller's SQL cannot
-- forge it. The (SELECT ...) makes PostgreSQL call it once per statement, not once per row.
CREATE TABLE public.agent_notes (
  id         bigserial PRIMARY KEY,
  owner      text NOT NULL DEFAULT tidemark.caller(),
  body       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE public.agent_notes IS 'Notes agents keep for themselves: each caller sees only its own (row-level security).';
ALTER TABLE public.agent_notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.agent_notes FORCE ROW LEVEL SECURITY;
CREATE POLICY agent_notes_own ON public.agent_notes
  USING (owner = (SELECT tidemark.caller()))
  WITH CHECK (owner = (SELECT tidemark.caller()));
GRANT SELECT ON public.agent_notes TO tidemark_reader;
GRANT SELECT, INSERT, UPDATE, DELETE ON public.agent_notes TO tidemark_writer;
GRANT USAGE, SELECT ON SEQUENCE public.agent_notes_id_seq TO tidemark_writer;
INSERT INTO public.agent_notes (owner, body, created_at) VALUES
  ('dev-read-write', 'Plan every change first, and show the plan before committing it.', timestamptz '2025-03-01 09:00:00+00'),
  ('dev-read-write', 'Customer 7 prefers email.', timestamptz '2025-03-02 09:00:00+00'),
  ('dev-read-only', 'Only the read-only caller sees this note.', timestamptz '2025-03-03 09:00:00+00');
