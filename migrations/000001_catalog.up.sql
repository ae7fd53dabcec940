-- Catalog state. Portable SQL: the same files migrate Postgres and SQLite.
-- Namespace levels are stored joined by the 0x1F unit separator (name_key),
-- which keeps lookups single-column and indexable in both databases.
CREATE TABLE warehouses (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    location    TEXT NOT NULL,
    properties  TEXT NOT NULL DEFAULT '{}',
    -- bumped to serialise location-changing operations within a warehouse
    lock_seq    BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL
);

CREATE TABLE namespaces (
    id           TEXT PRIMARY KEY,
    warehouse_id TEXT NOT NULL REFERENCES warehouses (id) ON DELETE RESTRICT,
    name_key     TEXT NOT NULL,
    parent_key   TEXT NOT NULL,
    parent_id    TEXT REFERENCES namespaces (id) ON DELETE RESTRICT,
    properties   TEXT NOT NULL DEFAULT '{}',
    UNIQUE (warehouse_id, name_key)
);
CREATE INDEX namespaces_children ON namespaces (warehouse_id, parent_key, name_key);

-- Tables and views share one name space per namespace: one row type, one
-- unique constraint.
CREATE TABLE catalog_objects (
    id                         TEXT PRIMARY KEY,
    warehouse_id               TEXT NOT NULL REFERENCES warehouses (id) ON DELETE RESTRICT,
    namespace_id               TEXT NOT NULL REFERENCES namespaces (id) ON DELETE RESTRICT,
    name                       TEXT NOT NULL,
    kind                       TEXT NOT NULL CHECK (kind IN ('table', 'view')),
    location                   TEXT NOT NULL,
    metadata_location          TEXT NOT NULL,
    previous_metadata_location TEXT,
    -- the metadata JSON, zstd-compressed by the store (about 10x smaller,
    -- which is what keeps loadTable of large tables fast)
    metadata                   BYTEA NOT NULL,
    format_version             INTEGER NOT NULL,
    updated_at                 BIGINT NOT NULL,
    UNIQUE (namespace_id, name)
);
CREATE INDEX catalog_objects_kind ON catalog_objects (namespace_id, kind, name);
CREATE INDEX catalog_objects_location ON catalog_objects (warehouse_id, location);

CREATE TABLE idempotency_keys (
    key        TEXT PRIMARY KEY,
    operation  TEXT NOT NULL,
    done       INTEGER NOT NULL DEFAULT 0,
    status     INTEGER NOT NULL DEFAULT 0,
    headers    TEXT NOT NULL DEFAULT '{}',
    body       TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
