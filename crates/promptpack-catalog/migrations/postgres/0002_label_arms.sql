-- Split labels: a label may point at two or more versions with weights
-- (`production`: v3 90, v4 10), for a service that picks an arm per caller.
-- `labels.version` stays the label's heaviest arm, what `get` by label
-- reads; a label with one version has no rows here.
CREATE TABLE label_arms (
    prompt_id TEXT COLLATE "C" NOT NULL,
    label TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    weight BIGINT NOT NULL,
    PRIMARY KEY (prompt_id, label, version),
    FOREIGN KEY (prompt_id, label) REFERENCES labels (prompt_id, label),
    FOREIGN KEY (prompt_id, version) REFERENCES prompt_versions (prompt_id, version)
);

-- The arms a split set, as `3:90,4:10`, in the audit entry that set them.
ALTER TABLE audit ADD COLUMN arms TEXT;
