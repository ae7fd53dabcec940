-- Back to the previous version's index, which trusts every leaf row. That
-- is safe: a row with colfiles = 1 lists all of its leaf's data files, as
-- the previous version expects; its column-file rows only make that
-- version read a leaf in which it then finds no data row by that name, as
-- for any path the leaf no longer holds. A row with 0 the previous version
-- wrote itself. The leaf rows the up migration deleted stay deleted; the
-- next commit on each table indexes those leaves again, as after a
-- forgotten index.
ALTER TABLE file_index_leaves DROP COLUMN colfiles;
