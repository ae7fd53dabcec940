-- Functions are a third kind of catalog object (see the shared file of
-- this number); Postgres alters the constraint in place.
ALTER TABLE catalog_objects DROP CONSTRAINT catalog_objects_kind_check;
ALTER TABLE catalog_objects ADD CONSTRAINT catalog_objects_kind_check CHECK (kind IN ('table', 'view', 'function'));
