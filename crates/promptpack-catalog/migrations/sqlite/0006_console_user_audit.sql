-- Who added and removed each console user, and when: a removed user's row
-- is gone from console_users, so without this history nothing would say
-- who took their access away. Append-only, as the prompts' audit is.
CREATE TABLE console_user_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_name TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('add', 'remove')),
    role TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    author TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TRIGGER console_user_audit_append_only_update BEFORE UPDATE ON console_user_audit
BEGIN SELECT RAISE(ABORT, 'the console user audit is append-only'); END;
CREATE TRIGGER console_user_audit_append_only_delete BEFORE DELETE ON console_user_audit
BEGIN SELECT RAISE(ABORT, 'the console user audit is append-only'); END;
