DELETE FROM catalog_events WHERE object_type = 'function';
ALTER TABLE catalog_events DROP CONSTRAINT catalog_events_object_type_check;
ALTER TABLE catalog_events ADD CONSTRAINT catalog_events_object_type_check
    CHECK (object_type IN ('table', 'view', 'namespace'));
