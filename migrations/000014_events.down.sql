DROP TABLE event_cursors;
DROP TABLE catalog_events;
