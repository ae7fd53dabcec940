-- The change-event outbox (see the shared file). On Postgres, sequence
-- numbers are taken in insert order, not commit order, so each row also
-- records its transaction's id: readers list only rows whose transaction
-- is older than every transaction still running (pg_snapshot_xmin), in
-- (txid, seq) order, which no later commit can insert before.
CREATE TABLE catalog_events (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    txid        BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
    id          TEXT NOT NULL UNIQUE,
    at          BIGINT NOT NULL,
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

CREATE TABLE event_cursors (
    sink       TEXT PRIMARY KEY,
    txid       BIGINT NOT NULL,
    seq        BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
