-- The users of the web console: each signs in with a bearer token, of
-- which the catalog keeps only the SHA-256 (a copy of the database gives
-- no one a way in). Not append-only: an admin removes a user, and a
-- removed name may be added again with another token.
CREATE TABLE console_users (
    name TEXT COLLATE "C" PRIMARY KEY,
    role TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
    token_hash TEXT COLLATE "C" NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
