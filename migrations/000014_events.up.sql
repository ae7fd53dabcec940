-- The change-event outbox: one row per committed change, inserted in the
-- change's own transaction, read in (txid, seq) order by the pull endpoint
-- and by each sink's delivery job, and pruned after the retention. SQLite
-- runs one writer at a time, so seq alone is commit order there and txid
-- stays 0; postgres/ records the writing transaction's id.
CREATE TABLE catalog_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    txid        BIGINT NOT NULL DEFAULT 0,
    id          TEXT NOT NULL UNIQUE,
    at          BIGINT NOT NULL,            -- unix milliseconds
    warehouse   TEXT NOT NULL,
    namespace_key TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    object_type TEXT NOT NULL CHECK (object_type IN ('table', 'view', 'namespace')),
    object_uuid TEXT NOT NULL DEFAULT '',
    operation   TEXT NOT NULL,
    request_id  TEXT NOT NULL DEFAULT '',
    request_events INTEGER NOT NULL DEFAULT 1, -- events its change wrote
    actor       TEXT NOT NULL DEFAULT '',
    body        TEXT NOT NULL
);
CREATE INDEX catalog_events_order ON catalog_events (txid, seq);
CREATE INDEX catalog_events_at ON catalog_events (at);

-- How far each sink (NATS, webhook) has delivered.
CREATE TABLE event_cursors (
    sink       TEXT PRIMARY KEY,
    txid       BIGINT NOT NULL,
    seq        BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
