-- The catalog's first schema. Versions, revisions and the audit history are
-- append-only: the triggers at the end refuse UPDATE and DELETE on them, so
-- that not even a hand-written statement rewrites history.
CREATE TABLE prompts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    latest_version INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);

CREATE TABLE snippets (
    name TEXT PRIMARY KEY,
    latest_revision INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);

CREATE TABLE snippet_revisions (
    name TEXT NOT NULL REFERENCES snippets (name),
    revision INTEGER NOT NULL,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (name, revision)
);

CREATE TABLE prompt_versions (
    prompt_id TEXT NOT NULL REFERENCES prompts (id),
    version INTEGER NOT NULL,
    system_text TEXT NOT NULL,
    user_text TEXT,
    front_matter TEXT NOT NULL,
    delimiter_open TEXT NOT NULL,
    delimiter_close TEXT NOT NULL,
    standalone_tags INTEGER NOT NULL,
    resolved_system TEXT NOT NULL,
    resolved_user TEXT,
    content_hash TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (prompt_id, version)
);

-- A prompt's history reads these small columns of every version; the
-- texts before them would otherwise take it through overflow pages.
CREATE INDEX prompt_versions_summary
    ON prompt_versions (prompt_id, version, content_hash, author, message, created_at);

CREATE TABLE version_pins (
    prompt_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    snippet TEXT NOT NULL,
    revision INTEGER NOT NULL,
    PRIMARY KEY (prompt_id, version, snippet),
    FOREIGN KEY (prompt_id, version) REFERENCES prompt_versions (prompt_id, version),
    FOREIGN KEY (snippet, revision) REFERENCES snippet_revisions (name, revision)
);

CREATE TABLE labels (
    prompt_id TEXT NOT NULL,
    label TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (prompt_id, label),
    FOREIGN KEY (prompt_id, version) REFERENCES prompt_versions (prompt_id, version)
);

CREATE TABLE audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    prompt_id TEXT NOT NULL REFERENCES prompts (id),
    action TEXT NOT NULL,
    label TEXT,
    from_version INTEGER,
    to_version INTEGER,
    author TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX audit_by_prompt ON audit (prompt_id, seq);

CREATE TRIGGER prompt_versions_append_only_update BEFORE UPDATE ON prompt_versions
BEGIN SELECT RAISE(ABORT, 'prompt versions are append-only'); END;
CREATE TRIGGER prompt_versions_append_only_delete BEFORE DELETE ON prompt_versions
BEGIN SELECT RAISE(ABORT, 'prompt versions are append-only'); END;
CREATE TRIGGER version_pins_append_only_update BEFORE UPDATE ON version_pins
BEGIN SELECT RAISE(ABORT, 'version pins are append-only'); END;
CREATE TRIGGER version_pins_append_only_delete BEFORE DELETE ON version_pins
BEGIN SELECT RAISE(ABORT, 'version pins are append-only'); END;
CREATE TRIGGER snippet_revisions_append_only_update BEFORE UPDATE ON snippet_revisions
BEGIN SELECT RAISE(ABORT, 'snippet revisions are append-only'); END;
CREATE TRIGGER snippet_revisions_append_only_delete BEFORE DELETE ON snippet_revisions
BEGIN SELECT RAISE(ABORT, 'snippet revisions are append-only'); END;
CREATE TRIGGER audit_append_only_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit history is append-only'); END;
CREATE TRIGGER audit_append_only_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit history is append-only'); END;
