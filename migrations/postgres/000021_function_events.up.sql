-- Function events (see the shared file of this number); Postgres alters
-- the constraint in place.
ALTER TABLE catalog_events DROP CONSTRAINT catalog_events_object_type_check;
ALTER TABLE catalog_events ADD CONSTRAINT catalog_events_object_type_check
    CHECK (object_type IN ('table', 'view', 'namespace', 'function'));
