DELETE FROM catalog_objects WHERE kind = 'function';
ALTER TABLE catalog_objects DROP CONSTRAINT catalog_objects_kind_check;
ALTER TABLE catalog_objects ADD CONSTRAINT catalog_objects_kind_check CHECK (kind IN ('table', 'view'));
