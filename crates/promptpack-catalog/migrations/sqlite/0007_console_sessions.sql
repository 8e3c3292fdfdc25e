-- The console's browser sessions, kept in the catalog so that every console
-- of a catalog serves every session and a restart signs no one out. Only
-- the SHA-256 of a session's id is kept: a copy of the database signs no
-- one in. Not append-only: a session ends at sign-out, at expiry, past its
-- user's cap (the oldest first) and with its user.
CREATE TABLE console_sessions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id_hash TEXT NOT NULL UNIQUE,
    user_name TEXT NOT NULL REFERENCES console_users (name) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
-- A user's sessions, oldest first: the cap's eviction and sign-out
-- everywhere.
CREATE INDEX console_sessions_user ON console_sessions (user_name, seq);
-- The expiry's DELETE.
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
