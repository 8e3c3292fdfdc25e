-- TRUNCATE skips the row triggers of the first schema: it would empty the
-- audit history, or the versions, in one statement. A statement trigger
-- before TRUNCATE refuses it on every append-only table (and on each table
-- a `TRUNCATE … CASCADE` reaches).
CREATE TRIGGER prompt_versions_no_truncate BEFORE TRUNCATE ON prompt_versions
    FOR EACH STATEMENT EXECUTE FUNCTION promptpack_append_only();
CREATE TRIGGER version_pins_no_truncate BEFORE TRUNCATE ON version_pins
    FOR EACH STATEMENT EXECUTE FUNCTION promptpack_append_only();
CREATE TRIGGER snippet_revisions_no_truncate BEFORE TRUNCATE ON snippet_revisions
    FOR EACH STATEMENT EXECUTE FUNCTION promptpack_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION promptpack_append_only();
