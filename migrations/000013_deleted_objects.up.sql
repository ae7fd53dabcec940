-- Soft-deleted tables and views (a warehouse with the soft deletion
-- profile): the dropped row moves here with its metadata, so that its name
-- is free for a new object while it can still be undropped, until a
-- background job forgets it (and purges its files when the drop asked to)
-- at expires_at. A warehouse dropped later takes its deleted objects with it.
CREATE TABLE deleted_objects (
    id                TEXT PRIMARY KEY,
    warehouse_id      TEXT NOT NULL REFERENCES warehouses (id) ON DELETE CASCADE,
    namespace_key     TEXT NOT NULL,
    name              TEXT NOT NULL,
    kind              TEXT NOT NULL CHECK (kind IN ('table', 'view')),
    location          TEXT NOT NULL,
    metadata_location TEXT NOT NULL,
    metadata          BYTEA NOT NULL,
    format_version    INTEGER NOT NULL,
    deleted_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    purge             INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX deleted_objects_listing ON deleted_objects (warehouse_id, deleted_at, id);
