DROP INDEX IF EXISTS catalog_objects_location_c;
