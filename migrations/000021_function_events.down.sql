-- Function events go with the object type (a down migration loses them).
DELETE FROM catalog_events WHERE object_type = 'function';
CREATE TABLE catalog_events_old (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    txid        BIGINT NOT NULL DEFAULT 0,
    id          TEXT NOT NULL UNIQUE,
    at          BIGINT NOT NULL,
    warehouse   TEXT NOT NULL,
    namespace_key TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    object_type TEXT NOT NULL CHECK (object_type IN ('table', 'view', 'namespace')),
    object_uuid TEXT NOT NULL DEFAULT '',
    operation   TEXT NOT NULL,
    request_id  TEXT NOT NULL DEFAULT '',
    request_events INTEGER NOT NULL DEFAULT 1,
    actor       TEXT NOT NULL DEFAULT '',
    body        TEXT NOT NULL
);
INSERT INTO catalog_events_old (seq, txid, id, at, warehouse, namespace_key, name, object_type, object_uuid,
    operation, request_id, request_events, actor, body)
SELECT seq, txid, id, at, warehouse, namespace_key, name, object_type, object_uuid,
    operation, request_id, request_events, actor, body
FROM catalog_events;
DELETE FROM sqlite_sequence WHERE name = 'catalog_events_old';
INSERT INTO sqlite_sequence (name, seq) SELECT 'catalog_events_old', seq FROM sqlite_sequence WHERE name = 'catalog_events';
DROP TABLE catalog_events;
ALTER TABLE catalog_events_old RENAME TO catalog_events;
CREATE INDEX catalog_events_order ON catalog_events (txid, seq);
CREATE INDEX catalog_events_at ON catalog_events (at);
