-- Base-file index of v4 tables (docs/design.md, "Base-file index"): which
-- row of which leaf manifest names a data file, so that a column-file
-- commit finds its base files without reading every leaf of the table.
-- Leaves are immutable, so rows are only ever inserted (with the pointer
-- swap of the commit that wrote the leaf, or by the rebuild of a leaf
-- written elsewhere) and deleted with their table; nothing updates them.
--
-- This file is SQLite's: WITHOUT ROWID stores each row once, in its
-- primary key. Postgres has its own file (postgres/) with the same tables.
--
-- file_index_leaves marks a leaf whose rows are all in file_index, so that
-- "which leaves of this root are indexed" is one query.
CREATE TABLE file_index_leaves (
    table_id TEXT NOT NULL,     -- catalog_objects.id
    leaf     TEXT NOT NULL,     -- absolute leaf manifest location
    PRIMARY KEY (table_id, leaf)
) WITHOUT ROWID;

CREATE TABLE file_index (
    table_id TEXT NOT NULL,
    location TEXT NOT NULL,     -- absolute data file location
    leaf     TEXT NOT NULL,
    position INTEGER NOT NULL,  -- row number in the leaf, from 0
    PRIMARY KEY (table_id, location, leaf, position)
) WITHOUT ROWID;
