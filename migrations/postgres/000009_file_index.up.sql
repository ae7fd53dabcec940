-- Base-file index of v4 tables: see ../000009_file_index.up.sql, which
-- SQLite runs. The same tables without SQLite's WITHOUT ROWID; rows are
-- never updated, so heap pages are filled completely (the default).
CREATE TABLE file_index_leaves (
    table_id TEXT NOT NULL,
    leaf     TEXT NOT NULL,
    lineage  TEXT NOT NULL,
    PRIMARY KEY (table_id, leaf)
);

CREATE TABLE file_index (
    table_id TEXT NOT NULL,
    location TEXT NOT NULL,
    lineage  TEXT NOT NULL,
    PRIMARY KEY (table_id, location, lineage)
);
