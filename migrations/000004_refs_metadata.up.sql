-- The document a snapshots=refs loadTable serves (the metadata without the
-- snapshots no branch or tag points at), written by the same statement that
-- moves the pointer, so that such a load reads a few kilobytes instead of
-- the whole metadata of a long-lived table. zstd-compressed like metadata;
-- a single 0x00 byte means "the same as metadata" (nothing to drop); NULL
-- means not derived (rows from before this migration, views): loads then
-- filter the full document.
ALTER TABLE catalog_objects ADD COLUMN refs_metadata BYTEA;
