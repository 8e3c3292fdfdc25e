-- Who added and removed each console user, and when: a removed user's row
-- is gone from console_users, so without this history nothing would say
-- who took their access away. Append-only, as the prompts' audit is.
CREATE TABLE console_user_audit (
    seq BIGSERIAL PRIMARY KEY,
    user_name TEXT COLLATE "C" NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('add', 'remove')),
    role TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    author TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TRIGGER console_user_audit_append_only BEFORE UPDATE OR DELETE ON console_user_audit
    FOR EACH ROW EXECUTE FUNCTION promptpack_append_only();
CREATE TRIGGER console_user_audit_no_truncate BEFORE TRUNCATE ON console_user_audit
    FOR EACH STATEMENT EXECUTE FUNCTION promptpack_append_only();
