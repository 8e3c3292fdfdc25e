-- What binary serves what: a live handle registers the contract of the
-- binary it runs (a process name, the label it follows, the contract and
-- its SHA-256), then refreshes last_seen while it runs. A registration not
-- seen for a day is deleted by the next registration: a process that
-- stopped leaves no row behind for long.
CREATE TABLE registered_builds (
    process TEXT COLLATE "C" NOT NULL,
    label TEXT COLLATE "C" NOT NULL,
    contract_hash TEXT NOT NULL,
    contract TEXT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    PRIMARY KEY (process, label)
);
-- The expiry's DELETE and a console's "seen within" read by last_seen.
CREATE INDEX registered_builds_last_seen ON registered_builds (last_seen);
