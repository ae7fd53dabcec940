ALTER TABLE catalog_objects DROP COLUMN refs_metadata;
