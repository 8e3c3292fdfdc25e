-- The catalog's first schema. Versions, revisions and the audit history are
-- append-only: the triggers at the end refuse UPDATE and DELETE on them, so
-- that not even a hand-written statement rewrites history.
CREATE TABLE prompts (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    deleted BIGINT NOT NULL DEFAULT 0,
    latest_version BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);

CREATE TABLE snippets (
    name TEXT COLLATE "C" PRIMARY KEY,
    latest_revision BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);

CREATE TABLE snippet_revisions (
    name TEXT COLLATE "C" NOT NULL REFERENCES snippets (name),
    revision BIGINT NOT NULL,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (name, revision)
);

CREATE TABLE prompt_versions (
    prompt_id TEXT COLLATE "C" NOT NULL REFERENCES prompts (id),
    version BIGINT NOT NULL,
    system_text TEXT NOT NULL,
    user_text TEXT,
    front_matter TEXT NOT NULL,
    delimiter_open TEXT NOT NULL,
    delimiter_close TEXT NOT NULL,
    standalone_tags BIGINT NOT NULL,
    resolved_system TEXT NOT NULL,
    resolved_user TEXT,
    content_hash TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (prompt_id, version)
);

-- A prompt's history reads these small columns of every version; the
-- texts before them would otherwise take it through overflow pages.
CREATE INDEX prompt_versions_summary
    ON prompt_versions (prompt_id, version, content_hash, author, message, created_at);

CREATE TABLE version_pins (
    prompt_id TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    snippet TEXT COLLATE "C" NOT NULL,
    revision BIGINT NOT NULL,
    PRIMARY KEY (prompt_id, version, snippet),
    FOREIGN KEY (prompt_id, version) REFERENCES prompt_versions (prompt_id, version),
    FOREIGN KEY (snippet, revision) REFERENCES snippet_revisions (name, revision)
);

CREATE TABLE labels (
    prompt_id TEXT COLLATE "C" NOT NULL,
    label TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    PRIMARY KEY (prompt_id, label),
    FOREIGN KEY (prompt_id, version) REFERENCES prompt_versions (prompt_id, version)
);

CREATE TABLE audit (
    seq BIGSERIAL PRIMARY KEY,
    prompt_id TEXT COLLATE "C" NOT NULL REFERENCES prompts (id),
    action TEXT NOT NULL,
    label TEXT,
    from_version BIGINT,
    to_version BIGINT,
    author TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX audit_by_prompt ON audit (prompt_id, seq);

CREATE FUNCTION promptpack_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;
CREATE TRIGGER prompt_versions_append_only BEFORE UPDATE OR DELETE ON prompt_versions
    FOR EACH ROW EXECUTE FUNCTION promptpack_append_only();
CREATE TRIGGER version_pins_append_only BEFORE UPDATE OR DELETE ON version_pins
    FOR EACH ROW EXECUTE FUNCTION promptpack_append_only();
CREATE TRIGGER snippet_revisions_append_only BEFORE UPDATE OR DELETE ON snippet_revisions
    FOR EACH ROW EXECUTE FUNCTION promptpack_append_only();
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit
    FOR EACH ROW EXECUTE FUNCTION promptpack_append_only();
