-- Files a snapshot expiry will delete once its commit has landed. Rows are
-- written before the remove-snapshots commit and removed as each file is
-- deleted, so that a clean-up cut short (crash, kill -9) is finished by the
-- next run, and one whose commit never landed deletes nothing.
CREATE TABLE pending_file_deletes (
    table_uuid   TEXT NOT NULL,
    location     TEXT NOT NULL,
    snapshot_ids TEXT NOT NULL,   -- comma-separated ids the expiry removes
    created_at   BIGINT NOT NULL, -- unix milliseconds
    PRIMARY KEY (table_uuid, location)
);
