-- A function's create and drop are change events too, so the outbox's
-- object_type takes 'function'. SQLite cannot alter a CHECK constraint: the
-- table is rebuilt with the same columns and indexes, and its AUTOINCREMENT
-- counter carried over, so no event ever reuses a seq a continuation-token
-- may already point past (postgres/000021_function_events.up.sql alters
-- the constraint in place).
CREATE TABLE catalog_events_new (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    txid        BIGINT NOT NULL DEFAULT 0,
    id          TEXT NOT NULL UNIQUE,
    at          BIGINT NOT NULL,            -- unix milliseconds
    warehouse   TEXT NOT NULL,
    namespace_key TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    object_type TEXT NOT NULL CHECK (object_type IN ('table', 'view', 'namespace', 'function')),
    object_uuid TEXT NOT NULL DEFAULT '',
    operation   TEXT NOT NULL,
    request_id  TEXT NOT NULL DEFAULT '',
    request_events INTEGER NOT NULL DEFAULT 1, -- events its change wrote
    actor       TEXT NOT NULL DEFAULT '',
    body        TEXT NOT NULL
);
INSERT INTO catalog_events_new (seq, txid, id, at, warehouse, namespace_key, name, object_type, object_uuid,
    operation, request_id, request_events, actor, body)
SELECT seq, txid, id, at, warehouse, namespace_key, name, object_type, object_uuid,
    operation, request_id, request_events, actor, body
FROM catalog_events;
DELETE FROM sqlite_sequence WHERE name = 'catalog_events_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'catalog_events_new', seq FROM sqlite_sequence WHERE name = 'catalog_events';
DROP TABLE catalog_events;
ALTER TABLE catalog_events_new RENAME TO catalog_events;
CREATE INDEX catalog_events_order ON catalog_events (txid, seq);
CREATE INDEX catalog_events_at ON catalog_events (at);
