-- Engines' metrics reports (see the shared file of this number); Postgres
-- numbers rows with an identity column.
CREATE TABLE table_reports (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_id    TEXT NOT NULL,
    report_type TEXT NOT NULL CHECK (report_type IN ('scan-report', 'commit-report')),
    received_at BIGINT NOT NULL,
    snapshot_id BIGINT NOT NULL,
    body        TEXT NOT NULL
);
CREATE INDEX table_reports_table ON table_reports (table_id, received_at, id);
CREATE INDEX table_reports_received ON table_reports (received_at);
