-- Two roles callers can map to. They cannot log in; Tidemark's login switches to them with
-- SET LOCAL ROLE for each call, so PostgreSQL's own grants decide what a caller may do.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tidemark_reader') THEN
    CREATE ROLE tidemark_reader NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tidemark_writer') THEN
    CREATE ROLE tidemark_writer NOLOGIN;
  END IF;
  IF NOT pg_has_role(current_user, 'tidemark_reader', 'MEMBER') THEN
    EXECUTE format('GRANT tidemark_reader TO %I', current_user);
  END IF;
  IF NOT pg_has_role(current_user, 'tidemark_writer', 'MEMBER') THEN
    EXECUTE format('GRANT tidemark_writer TO %I', current_user);
  END IF;
END
$$;
COMMENT ON ROLE tidemark_reader IS 'Tidemark callers that read: grant it SELECT on what they may see.';
COMMENT ON ROLE tidemark_writer IS 'Tidemark callers that read and change data: grant it what they may change.';
