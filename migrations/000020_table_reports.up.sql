-- Engines' metrics reports (POST .../tables/{table}/metrics), one row per
-- report, checked and bounded before they are stored (their metadata
-- without credential-like entries). A report belongs to its table by id,
-- not by name: a rename keeps its reports, an undrop brings them back. No
-- foreign key: a soft-dropped table's row leaves catalog_objects for
-- deleted_objects while its reports stay; the store removes them when the
-- table is removed for good, and the retention prune also sweeps reports
-- of tables that no longer exist. SQLite numbers rows with AUTOINCREMENT;
-- postgres/ has an identity column instead.
CREATE TABLE table_reports (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id    TEXT NOT NULL,
    report_type TEXT NOT NULL CHECK (report_type IN ('scan-report', 'commit-report')),
    received_at BIGINT NOT NULL,            -- unix milliseconds
    snapshot_id BIGINT NOT NULL,
    body        TEXT NOT NULL               -- the checked report, JSON
);
-- A table's reports newest first, and the retention prune.
CREATE INDEX table_reports_table ON table_reports (table_id, received_at, id);
CREATE INDEX table_reports_received ON table_reports (received_at);
