-- Files an orphan-file removal is deleting or has deleted (service/
-- maintenance/orphanfence.go). A run records its candidates here, and sets
-- the table's orphan_hold, in one transaction that locks the table's row;
-- it then re-reads the table's metadata, keeps only the candidates nothing
-- references and deletes them. A deleted file's row stays as a tombstone
-- (state 'deleted', deleted_at) for maintenance.OrphanTombstoneRetention;
-- the rows of files it spared are removed. A swap that adds a file with a
-- row, candidate or tombstone, is refused (store/sqlstore/orphans.go): the
-- swap and the recording serialize on the table's row, so either the
-- re-read sees the commit or the commit sees the rows, and a commit that
-- lands after the delete sees the tombstone. claimed_at is the run's lease
-- (renewed while it deletes): the candidate rows of a run that died are
-- turned into tombstones by a later run once it runs out (the dead run may
-- have deleted them).
CREATE TABLE orphan_candidates (
    table_id   TEXT NOT NULL,   -- catalog_objects.id
    location   TEXT NOT NULL,   -- normalized file location
    run_id     TEXT NOT NULL,
    claimed_at BIGINT NOT NULL, -- unix milliseconds, database clock
    state      TEXT NOT NULL DEFAULT 'candidate', -- 'candidate' or 'deleted'
    deleted_at BIGINT,          -- unix milliseconds, set with state 'deleted'
    PRIMARY KEY (table_id, location)
);
CREATE INDEX orphan_candidates_deleted ON orphan_candidates (deleted_at) WHERE state = 'deleted';
-- 1 while the table has rows in orphan_candidates (candidates or
-- tombstones). The common commit is a single UPDATE that requires 0: a
-- removal's recording changes the row, so on Postgres a swap blocked
-- behind it re-checks the flag after it commits (a NOT EXISTS on the
-- candidates would still read the old snapshot in that statement).
ALTER TABLE catalog_objects ADD COLUMN orphan_hold INTEGER NOT NULL DEFAULT 0;
