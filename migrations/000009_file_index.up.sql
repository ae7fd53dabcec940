-- Base-file index of v4 tables (docs/design.md, "Base-file index"): in
-- which leaf manifests of a table a data file may be, so that a
-- column-file commit finds its base files without reading every leaf.
--
-- Leaves form lineages: a leaf written for added files (or indexed by a
-- rebuild) starts one; a leaf that rewrites another (same files, some
-- rows changed) continues its parent's. A data file is indexed once per
-- lineage, so a commit that rewrites two leaves writes two leaf rows and
-- no file rows. Leaves are immutable, so rows are only ever inserted (with
-- the pointer swap of the commit that wrote the leaf, or by the rebuild of
-- a leaf written elsewhere) and deleted with their table.
--
-- This file is SQLite's: WITHOUT ROWID stores each row once, in its
-- primary key. Postgres has its own file (postgres/) with the same tables.
CREATE TABLE file_index_leaves (
    table_id TEXT NOT NULL,     -- catalog_objects.id
    leaf     TEXT NOT NULL,     -- absolute leaf manifest location
    lineage  TEXT NOT NULL,     -- id of the lineage the leaf belongs to
    PRIMARY KEY (table_id, leaf)
) WITHOUT ROWID;

CREATE TABLE file_index (
    table_id TEXT NOT NULL,
    location TEXT NOT NULL,     -- absolute data file location
    lineage  TEXT NOT NULL,
    PRIMARY KEY (table_id, location, lineage)
) WITHOUT ROWID;
