-- Files an orphan-file removal is about to delete (service/maintenance/
-- orphans.go). A run records its candidates here, and sets the table's
-- orphan_hold, in one transaction that locks the table's row; it then
-- re-reads the table's metadata, keeps only the candidates nothing
-- references, deletes them and removes its rows. A commit that lands
-- while a table is held must not add a file that is a candidate
-- (store/sqlstore/orphans.go): the swap and the recording serialize on
-- the row, so either the re-read sees the commit or the commit sees the
-- rows. claimed_at is the run's lease (renewed while it deletes): the rows
-- of a run that died are taken over by a later run once it runs out.
CREATE TABLE orphan_candidates (
    table_id   TEXT NOT NULL,   -- catalog_objects.id
    location   TEXT NOT NULL,   -- normalized file location
    run_id     TEXT NOT NULL,
    claimed_at BIGINT NOT NULL, -- unix milliseconds, database clock
    PRIMARY KEY (table_id, location)
);
-- 1 while the table has rows in orphan_candidates. The common commit is a
-- single UPDATE that requires 0: a removal's recording changes the row, so
-- on Postgres a swap blocked behind it re-checks the flag after it
-- commits (a NOT EXISTS on the candidates would still read the old
-- snapshot in that statement).
ALTER TABLE catalog_objects ADD COLUMN orphan_hold INTEGER NOT NULL DEFAULT 0;
