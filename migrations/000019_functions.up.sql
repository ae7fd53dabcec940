-- Functions (SQL UDFs, the REST spec's listFunctions and loadFunction) are
-- a third kind of catalog object: they share the name space of tables and
-- views in a namespace (one unique (namespace_id, name)), which keeps one
-- row type and one lookup path. SQLite cannot alter a CHECK constraint, so
-- the table is rebuilt with the same columns and indexes
-- (postgres/000019_functions.up.sql alters the constraint in place). No
-- other table references catalog_objects.
CREATE TABLE catalog_objects_new (
    id                         TEXT PRIMARY KEY,
    warehouse_id               TEXT NOT NULL REFERENCES warehouses (id) ON DELETE RESTRICT,
    namespace_id               TEXT NOT NULL REFERENCES namespaces (id) ON DELETE RESTRICT,
    name                       TEXT NOT NULL,
    kind                       TEXT NOT NULL CHECK (kind IN ('table', 'view', 'function')),
    location                   TEXT NOT NULL,
    metadata_location          TEXT NOT NULL,
    previous_metadata_location TEXT,
    metadata                   BYTEA NOT NULL,
    format_version             INTEGER NOT NULL,
    updated_at                 BIGINT NOT NULL,
    refs_metadata              BYTEA,
    orphan_hold                INTEGER NOT NULL DEFAULT 0,
    UNIQUE (namespace_id, name)
);
INSERT INTO catalog_objects_new (id, warehouse_id, namespace_id, name, kind, location, metadata_location,
    previous_metadata_location, metadata, format_version, updated_at, refs_metadata, orphan_hold)
SELECT id, warehouse_id, namespace_id, name, kind, location, metadata_location,
    previous_metadata_location, metadata, format_version, updated_at, refs_metadata, orphan_hold
FROM catalog_objects;
DROP TABLE catalog_objects;
ALTER TABLE catalog_objects_new RENAME TO catalog_objects;
CREATE INDEX catalog_objects_kind ON catalog_objects (namespace_id, kind, name);
CREATE INDEX catalog_objects_location ON catalog_objects (warehouse_id, location);
