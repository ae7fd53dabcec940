-- Audit trail: one row per mutating request and per credential vend.
-- Rows are only ever appended (and listed newest first, keyset-paged on
-- (at, id)); nothing in the catalog updates them.
CREATE TABLE audit_events (
    id         TEXT PRIMARY KEY,
    at         BIGINT NOT NULL,            -- unix milliseconds
    request_id TEXT NOT NULL DEFAULT '',
    principal  TEXT NOT NULL,              -- "source:subject"
    action     TEXT NOT NULL,              -- "POST /v1/{prefix}/namespaces", "vend-credentials", ...
    resource   TEXT NOT NULL DEFAULT '',   -- "table:wh/ns/t", "warehouse:wh", ...
    decision   TEXT NOT NULL CHECK (decision IN ('allowed', 'denied', 'failed')),
    status     INTEGER NOT NULL,           -- HTTP status code
    detail     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_at ON audit_events (at, id);
CREATE INDEX audit_events_principal ON audit_events (principal, at, id);
