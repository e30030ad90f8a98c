-- Two roles callers can map to, created where they are missing (which needs CREATEROLE; an operator
-- may create them beforehand instead, as docs/security.md shows, and give them logins). Callers'
-- statements run on logins of their own roles, so nothing needs Tidemark's login to be a member of
-- them: the membership the first design used is granted only where the login may grant it, and a
-- comment on a role, which needs CREATEROLE too, only where it may write one.
DO $$
DECLARE
  may_make_roles boolean := (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tidemark_reader') THEN
    CREATE ROLE tidemark_reader NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tidemark_writer') THEN
    CREATE ROLE tidemark_writer NOLOGIN;
  END IF;
  IF may_make_roles THEN
    IF NOT pg_has_role(current_user, 'tidemark_reader', 'MEMBER') THEN
      EXECUTE format('GRANT tidemark_reader TO %I', current_user);
    END IF;
    IF NOT pg_has_role(current_user, 'tidemark_writer', 'MEMBER') THEN
      EXECUTE format('GRANT tidemark_writer TO %I', current_user);
    END IF;
    COMMENT ON ROLE tidemark_reader IS 'Tidemark callers that read: grant it SELECT on what they may see.';
    COMMENT ON ROLE tidemark_writer IS 'Tidemark callers that read and change data: grant it what they may change.';
  END IF;
END
$$;
